import type { Knex } from 'knex';
import PostgresClient from 'knex/lib/dialects/postgres';
import PostgresTransaction from 'knex/lib/dialects/postgres/execution/pg-transaction';
import { escapeLiteral } from 'pg';

/** The transaction option `withTenant` passes to `TenantAwarePostgresClient`. */
interface TenantTransactionConfig extends Knex.TransactionConfig {
  tenantId?: string;
}

/**
 * A transaction that, given a tenant, sends the tenant setting with BEGIN: one round trip
 * where knex would make two. Simple-query text takes no parameters, so the id travels as an
 * escaped literal.
 */
class TenantTransaction extends PostgresTransaction {
  private readonly tenantId: string | undefined;

  constructor(client: Knex.Client, container: unknown, config: TenantTransactionConfig | undefined, outerTx: unknown) {
    super(client, container, config, outerTx);
    // Read here, not in super: knex keeps only the options it knows. Begin runs later, after
    // this constructor has returned.
    this.tenantId = outerTx ? undefined : config?.tenantId;
  }

  begin(connection: unknown): Promise<unknown> {
    if (this.tenantId === undefined) return super.begin(connection);
    return this.query(connection, `begin; select set_config('app.tenant_id', ${escapeLiteral(this.tenantId)}, true)`);
  }
}

/** knex's Postgres client, with transactions that can open inside a tenant (`withTenant`). */
export class TenantAwarePostgresClient extends PostgresClient {
  transaction(container: unknown, config: unknown, outerTx: unknown): Knex.Transaction {
    // knex's typings call this knex's internal transaction class by the public transaction type.
    const transaction = new TenantTransaction(this, container, config as TenantTransactionConfig | undefined, outerTx);
    return transaction as unknown as Knex.Transaction;
  }
}

/**
 * Runs `work` in one transaction whose row-level-security context is `tenantId`: every tenant
 * table's policy compares its rows to this setting, so queries inside see only that tenant.
 * `set_config(..., true)` scopes the setting to the transaction, so a pooled connection never
 * carries one tenant's context into another request. `db` is a pool from `createPool`.
 */
export function withTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (!(db.client instanceof TenantAwarePostgresClient)) throw new Error('withTenant needs a pool from createPool');
  return db.transaction(work, { tenantId } as TenantTransactionConfig);
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
