import knex, { type Knex } from 'knex';
import { TenantAwarePostgresClient } from './tenancy';

/** A Knex pool on one database role. Which role decides what RLS lets it see. */
export function createPool(connectionString: string, max = 10): Knex {
  return knex({
    client: TenantAwarePostgresClient,
    connection: connectionString,
    pool: { min: 0, max },
    acquireConnectionTimeout: 10_000,
  });
}
