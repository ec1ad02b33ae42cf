import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Integrations: a tenant's connections to external systems (source hosts, incident and
// monitoring tools). Forge's vcs-host-a-action reads its base URL and token from here.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table integrations (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null,
      type text not null
        check (type in ('vcs-host-a', 'vcs-host-b', 'incident-tool-a', 'incident-tool-b', 'monitoring-tool-a', 'custom')),
      status text not null default 'active' check (status in ('active', 'inactive', 'error')),
      config jsonb not null default '{}',
      last_sync timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index integrations_by_type on integrations (tenant_id, type, status);
  `);
  await knex.raw(tenantIsolationSql('integrations'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table integrations');
}
