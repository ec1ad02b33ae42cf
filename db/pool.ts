import knex, { KnexTimeoutError, type Knex } from 'knex';
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

/** Limits a pool sets on each of its sessions (core/config.ts, `limits.database`). */
export interface PoolSessionLimits {
  /** Postgres cancels a longer statement. */
  statementTimeoutMs: number;
  /** Postgres ends a session idle this long inside a transaction, releasing its locks. */
  idleInTransactionTimeoutMs: number;
  /** How long a caller waits for a free connection before the pool gives up. */
  acquireTimeoutMs: number;
}

export interface PoolOptions {
  /** Without, Postgres's own settings apply (none): only tests leave them out. */
  limits?: PoolSessionLimits;
  /** Takes knex's own messages; without (tests, scripts), they go to the console. */
  logger?: Logger;
}

/**
 * A Knex pool on one database role. Which role decides what RLS lets it see. Its limits bound
 * how long one statement or one forgotten transaction may hold a connection, and how long a
 * caller waits for one: no request can keep the pool from everyone else indefinitely.
 */
export function createPool(connectionString: string, max = 10, { limits, logger }: PoolOptions = {}): Knex {
  // Pipelined: a statement goes out without waiting for the answer to the one before, so the
  // statements a transaction issues together (Promise.all) share one round trip. Queries that
  // hold a portal open (cursors, streams) are refused on such a connection; we use none.
  // The timeouts travel in the startup message, so they cost no statement per connection.
  const connection: Knex.PgConnectionConfig & { pipeline: boolean } = {
    connectionString,
    pipeline: true,
    ...(limits && {
      statement_timeout: limits.statementTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    }),
  };
  const db = knex({
    client: 'pg',
    connection,
    pool: { min: 0, max },
    acquireConnectionTimeout: limits?.acquireTimeoutMs ?? 10_000,
    ...(logger && { log: knexLog(logger) }),
  });
  return db;
}

/** Postgres's SQLSTATE for a statement cancelled, here by statement_timeout. */
const QUERY_CANCELED = '57014';

/**
 * Why `err` means the database is too busy for this request right now (no free connection, a
 * statement over its time), or undefined for any other error. Such a request may succeed if
 * retried later: it is a 503, not a failure of the server. (A transaction left idle past its
 * limit is not among them: Postgres ends that session, and the request holding it fails as the
 * bug it is.)
 */
export function databaseBusy(err: unknown): 'no-connection' | 'timed-out' | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof KnexTimeoutError) return 'no-connection';
    if ((cause as { code?: string }).code === QUERY_CANCELED) return 'timed-out';
  }
  return undefined;
}
