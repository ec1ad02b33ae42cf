import knex, { type Knex } from 'knex';

/** A Knex pool on one database role. Which role decides what RLS lets it see. */
export function createPool(connectionString: string, max = 10): Knex {
  return knex({
    client: 'pg',
    connection: connectionString,
    pool: { min: 0, max },
    acquireConnectionTimeout: 10_000,
  });
}
