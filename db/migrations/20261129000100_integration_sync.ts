import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Integration sync (docs/integrations.md): why the last sync failed, and what incident-tool-a
// syncs bring in: each incident of a matched entity and who is on call for it. Incident
// timestamps are the tool's own, to the microsecond: DORA's restore times are computed from them.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table integrations add column status_message text;

    create table incidents (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      integration_id uuid not null references integrations(id) on delete cascade,
      entity_id uuid not null references entities(id) on delete cascade,
      external_id text not null,
      service_id text not null,
      title text not null,
      status text not null check (status in ('triggered', 'acknowledged', 'resolved')),
      urgency text check (urgency in ('high', 'low')),
      severity text check (severity in ('critical', 'high', 'medium', 'low')),
      url text,
      opened_at timestamptz not null,
      resolved_at timestamptz,
      synced_at timestamptz not null default now(),
      -- An entity sees each of the tool's incidents once; a sync upserts by this key.
      unique (integration_id, external_id, entity_id)
    );
    -- GET /entities/{id}/incidents: newest first, all or of one status.
    create index incidents_of_entity on incidents (entity_id, opened_at desc, id desc);
    create index incidents_of_entity_by_status on incidents (entity_id, status, opened_at desc, id desc);

    create table oncall_entries (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      integration_id uuid not null references integrations(id) on delete cascade,
      entity_id uuid not null references entities(id) on delete cascade,
      service_id text not null,
      escalation_policy text,
      schedule text,
      level integer not null,
      user_name text not null,
      user_email text,
      starts_at timestamptz,
      ends_at timestamptz,
      synced_at timestamptz not null default now()
    );
    -- GET /entities/{id}/oncall: by escalation level, then shift start.
    create index oncall_of_entity on oncall_entries (entity_id, level, starts_at, id);
    -- A sync replaces an integration's entries per service.
    create index oncall_of_service on oncall_entries (integration_id, service_id);
  `);
  await knex.raw(tenantIsolationSql('incidents'));
  await knex.raw(tenantIsolationSql('oncall_entries'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table oncall_entries;
    drop table incidents;
    alter table integrations drop column status_message;
  `);
}
