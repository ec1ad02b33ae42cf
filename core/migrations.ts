import type { Knex } from 'knex';
import { migrationConfig, type MigrationServices } from '../db/knexfile';
import type { Config } from './config';
import { createKeyring } from './crypto/keyring';
import { hasPlainSecrets, openSecrets, sealSecrets } from './crypto/secretConfig';

/**
 * What the data migrations need of the domain, with this deployment's keys (db/knexfile.ts). The
 * keyring is built only when a migration first asks for it: an up-to-date database loads no keys.
 */
const migrationServices = (config: Config): MigrationServices => ({
  integrationSecrets() {
    const keyring = createKeyring(config);
    return {
      sealPlain: (secrets, tenantId) =>
        hasPlainSecrets(secrets) ? sealSecrets(keyring, secrets, tenantId) : undefined,
      open: (secrets, tenantId) => openSecrets(keyring, secrets, tenantId),
    };
  },
});

/** Knex settings that run this deployment's migrations: the owner role, and what they need. */
export const migrationConfigFor = (config: Config): Knex.Config =>
  migrationConfig(config.database.ownerUrl, migrationServices(config), config.limits.database.maintenance);
