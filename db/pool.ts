import knex, { type Knex } from 'knex';
import { prepareStatements } from './preparedStatements';

/** A Knex pool on one database role. Which role decides what RLS lets it see. */
export function createPool(connectionString: string, max = 10): Knex {
  // Pipelined: a statement goes out without waiting for the answer to the one before, so a
  // tenant transaction's BEGIN and first query share one round trip (db/tenancy.ts). Queries
  // that hold a portal open (cursors, streams) are refused on such a connection; we use none.
  const connection: Knex.PgConnectionConfig & { pipeline: boolean } = { connectionString, pipeline: true };
  const db = knex({
    client: 'pg',
    connection,
    pool: { min: 0, max },
    acquireConnectionTimeout: 10_000,
  });
  prepareStatements(db);
  return db;
}
