import type { Knex } from 'knex';

/**
 * Runs `work` in one transaction whose row-level-security context is `tenantId`: every tenant
 * table's policy compares its rows to this setting, so queries inside see only that tenant.
 * `set_config(..., true)` scopes the setting to the transaction, so a pooled connection never
 * carries one tenant's context into another request.
 */
export function withTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw("select set_config('app.tenant_id', ?, true)", [tenantId]);
    return work(trx);
  });
}

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
