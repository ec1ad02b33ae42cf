import type { Knex } from 'knex';
import type { Config } from '../core/config';
import type { Keyring } from '../core/crypto/keyring';

/** What an activity may use: created once per worker process. */
export interface ActivityDeps {
  db: Knex;
  config: Config;
  /** The process's keyring, shared with its workers' payload codec (opens sealed secrets). */
  keyring: Keyring;
}
