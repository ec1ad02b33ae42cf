import type { Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../core/config';
import type { Keyring } from '../core/crypto/keyring';
import type { EgressClient } from '../core/egress/egressClient';
import type { SearchEngine } from '../search/client';

/** What an activity may use: created once per worker process. */
export interface ActivityDeps {
  db: Knex;
  /** The system role (reads every tenant): backfill and the outbox drain. */
  system: Knex;
  search: SearchEngine;
  config: Config;
  /** The process's keyring, shared with its workers' payload codec (opens sealed secrets). */
  keyring: Keyring;
  /** The process's one egress guard: every request made for a tenant (forge actions, the crawler). */
  egress: EgressClient;
  /** The worker process's Temporal client (the forge pool's reconciliation asks it about workflows). */
  temporal: TemporalClient;
}
