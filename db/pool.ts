import knex, { type Knex } from 'knex';
import type { Logger } from 'pino';

/**
 * knex's own messages (a connection it could not acquire, a deprecation) as lines of the
 * process's JSON log. Left to knex, they go to console.log as plain text among those lines.
 */
function knexLog(logger: Logger): Knex.Config['log'] {
  const to = (level: 'debug' | 'warn' | 'error') => (message: unknown) =>
    typeof message === 'string'
      ? logger[level]({ from: 'knex' }, message)
      : logger[level]({ from: 'knex', message }, 'knex');
  return { debug: to('debug'), warn: to('warn'), error: to('error'), deprecate: to('warn') };
}

/**
 * A Knex pool on one database role. Which role decides what RLS lets it see. With `logger`,
 * knex's own messages go to it; without (tests, scripts), to the console.
 */
export function createPool(connectionString: string, max = 10, logger?: Logger): Knex {
  // Pipelined: a statement goes out without waiting for the answer to the one before, so the
  // statements a transaction issues together (Promise.all) share one round trip. Queries that
  // hold a portal open (cursors, streams) are refused on such a connection; we use none.
  const connection: Knex.PgConnectionConfig & { pipeline: boolean } = { connectionString, pipeline: true };
  const db = knex({
    client: 'pg',
    connection,
    pool: { min: 0, max },
    acquireConnectionTimeout: 10_000,
    ...(logger && { log: knexLog(logger) }),
  });
  return db;
}
