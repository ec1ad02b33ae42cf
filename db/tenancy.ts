import type { Knex } from 'knex';
import { escapeLiteral } from 'pg';
import { acquireConnection, knexOnConnection, releaseConnection, sendOn } from './knexInternals';

/**
 * Runs `work` in one transaction whose row-level-security context is `tenantId`: every tenant
 * table's policy compares its rows to this setting, so queries inside see only that tenant.
 * `set local` scopes the setting to the transaction, so a pooled connection never carries one
 * tenant's context into another request.
 *
 * Not knex's transaction(), which opens with a BEGIN of its own and builds a knex instance per
 * transaction (db/knexInternals.ts says why that matters): here BEGIN, the setting and
 * `precondition` (a statement that returns no rows) travel as one simple query, which takes no
 * parameters, so the id is an escaped literal; it and the COMMIT go to pg directly
 * (db/knexInternals.ts, sendOn). When it fails, withTenant fails with its error
 * before the work runs. The transaction ends with `work`'s promise; `trx` has no commit() or
 * rollback() of its own, and a query issued after the end is refused.
 *
 * PostgreSQL answers the COMMIT of a transaction that a failed statement aborted with a
 * ROLLBACK, not an error: should the work have swallowed such a statement's error, withTenant
 * fails instead of reporting a commit that did not happen.
 */
export async function withTenant<T>(
  db: Knex,
  tenantId: string,
  work: (trx: Knex.Transaction) => Promise<T>,
  precondition?: string,
): Promise<T> {
  const connection = await acquireConnection(db);
  let open = true;
  const settled = Promise.withResolvers<unknown>();
  settled.promise.catch(() => {}); // what waits for the commit listens to it; nobody has to
  const trx = knexOnConnection(
    db,
    connection,
    (sql) => {
      if (!open) throw new Error(`Query after its tenant transaction ended: ${sql}`);
    },
    settled.promise,
  );
  const end = (sql: 'COMMIT;' | 'ROLLBACK;') => {
    open = false;
    return sendOn(db, connection, sql);
  };
  try {
    const setting = `set local app.tenant_id = ${escapeLiteral(tenantId)}`;
    let result: T;
    try {
      await sendOn(db, connection, `begin; ${setting}${precondition ? `; ${precondition}` : ''}`);
      result = await work(trx);
    } catch (err) {
      // A ROLLBACK that fails means the connection broke, and the pool discards a broken one.
      await end('ROLLBACK;').catch(() => {});
      throw err;
    }
    const ended = await end('COMMIT;');
    if (!Array.isArray(ended) && ended.command === 'ROLLBACK') {
      throw new Error('The tenant transaction was rolled back: one of its statements failed');
    }
    settled.resolve(result);
    return result;
  } catch (err) {
    settled.reject(err);
    throw err;
  } finally {
    await releaseConnection(db, connection);
  }
}

/**
 * Lets this transaction's COMMIT return before its write-ahead log reaches disk
 * (`synchronous_commit = off` for it alone): the flush moves off the critical path. Only for
 * writes whose loss in a crash is harmless because a later synchronous commit of the same work
 * writes them again or makes them durable (the log is flushed in order).
 */
export const commitWithoutFlush = (trx: Knex) => trx.raw('set local synchronous_commit = off');

/**
 * SQL that puts a table under tenant isolation: RLS enabled and forced (so even the owner is
 * filtered) with one policy for reads and writes. Every migration that adds a tenant table uses it.
 */
export function tenantIsolationSql(table: string): string {
  return `
    alter table ${table} enable row level security;
    alter table ${table} force row level security;
    create policy tenant_isolation on ${table}
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant());`;
}
