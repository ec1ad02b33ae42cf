import type { Knex } from 'knex';
import { escapeLiteral } from 'pg';

/**
 * Runs `work` in one knex transaction whose row-level-security context is `tenantId`: every
 * tenant table's policy compares its rows to this setting, so queries inside see only that
 * tenant. `set local` scopes the setting to the transaction, so a pooled connection never carries
 * one tenant's context into another request. The setting goes as one simple query (which takes
 * no parameters, so the id is an escaped literal), with `precondition`, a statement that returns
 * no rows, behind it in the same round trip; when the precondition fails, withTenant fails with
 * its error.
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
  return db.transaction(async (trx) => {
    let failed: unknown;
    trx.on('query-error', (err: unknown) => (failed ??= err));
    await trx.raw(`set local app.tenant_id = ${escapeLiteral(tenantId)}${precondition ? `; ${precondition}` : ''}`);
    const result = await work(trx);
    if (failed !== undefined) {
      throw new Error('The tenant transaction was rolled back: one of its statements failed', { cause: failed });
    }
    return result;
  });
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
