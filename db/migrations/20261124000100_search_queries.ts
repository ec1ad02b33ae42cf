import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Every GET /search, for the tenant's search analytics: what was asked, how many results, how
// long the engine took. No user or key id: analytics are per tenant.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table search_queries (
      id bigint generated always as identity primary key,
      tenant_id uuid not null references tenants(id) on delete cascade,
      query text not null,
      result_count integer not null,
      took_ms integer not null,
      created_at timestamptz not null default now()
    );
    create index search_queries_by_time on search_queries (tenant_id, created_at);
  `);
  await knex.raw(tenantIsolationSql('search_queries'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table search_queries');
}
