import type { Knex } from 'knex';
import path from 'node:path';
import type { PoolSessionLimits } from './pool';

type ConfigObject = Record<string, unknown>;

/** Integration configs' secrets, sealed or opened with the API's keys. */
export interface IntegrationSecrets {
  /** The config with its plain secrets sealed; undefined when none is plain. */
  sealPlain(config: ConfigObject, tenantId: string): ConfigObject | undefined;
  open(config: ConfigObject, tenantId: string): ConfigObject;
}

/**
 * What data migrations need from the domain, handed in by whoever runs the migrations, so that
 * db/ imports nothing above it. Each is built when a migration first asks for it: an up-to-date
 * database loads no keys.
 */
export interface MigrationServices {
  integrationSecrets(): IntegrationSecrets;
}

/**
 * Knex settings for migrations, which run as the owner role, under the maintenance limits: long
 * enough for a data migration, short enough that a stuck one ends rather than holds its locks.
 */
export function migrationConfig(ownerUrl: string, services: MigrationServices, limits: PoolSessionLimits): Knex.Config {
  // knex(config) takes `userParams` (knex-builder/Knex.js); its Config type leaves it out.
  const config: Knex.Config & { userParams: { services: MigrationServices } } = {
    client: 'pg',
    connection: {
      connectionString: ownerUrl,
      statement_timeout: limits.statementTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    },
    acquireConnectionTimeout: limits.acquireTimeoutMs,
    migrations: {
      directory: path.join(__dirname, 'migrations'),
      // Under tsx the sources are .ts; a `npm run build` output has .js.
      loadExtensions: [path.extname(__filename)],
    },
    // A migration's transaction inherits them (knex copies userParams into transactions).
    userParams: { services },
  };
  return config;
}

/** The services of the run a migration is part of. */
export function migrationServices(knex: Knex): MigrationServices {
  const services = (knex.userParams as { services?: MigrationServices }).services;
  if (!services)
    throw new Error('Migrations run through migrationConfig (db/knexfile.ts), which hands them their services');
  return services;
}
