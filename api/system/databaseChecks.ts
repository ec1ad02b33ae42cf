import type { Knex } from 'knex';
import { Client } from 'pg';
import type { ConnectionPoolUsage } from './schemas';

/**
 * Asks the database itself, on a connection of its own, never one from the request pool: when
 * requests hold every pooled connection, a probe from the pool would queue behind them and report
 * the database down while it is answering. The connection is opened and closed per check (as the
 * app role, the role requests use); an abort (the check's deadline) closes it at once.
 */
export async function probeDatabase(connectionString: string, signal: AbortSignal): Promise<void> {
  const client = new Client({ connectionString });
  // A socket torn down by the abort is reported here too; the failed query already says so.
  client.on('error', () => undefined);
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= client.end().catch(() => undefined));
  signal.addEventListener('abort', close, { once: true });
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    signal.removeEventListener('abort', close);
    await close();
  }
}

/**
 * How busy the request pool is, read from Knex's pool without waiting for a connection.
 * Undefined once the pool is destroyed (the process shutting down).
 */
export function poolUsage(db: Knex): ConnectionPoolUsage | undefined {
  const pool = db.client.pool;
  if (!pool || !('numUsed' in pool)) return undefined;
  const max = db.client.config.pool?.max ?? 0;
  const used = pool.numUsed();
  return {
    max,
    used,
    free: pool.numFree(),
    pending: pool.numPendingAcquires(),
    saturated: used >= max,
  };
}
