import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Security findings (from scorecard rules, scanners and people) and governance actions (the work
// items that track fixing them, or anything else). An entity's findings and actions go with it.
const TENANT_TABLES = ['security_findings', 'governance_actions'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table security_findings (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      entity_id uuid not null references entities(id) on delete cascade,
      type text not null check (length(type) between 1 and 100),
      severity text not null check (severity in ('critical', 'high', 'medium', 'low', 'info')),
      status text not null default 'open' check (status in ('open', 'acknowledged', 'resolved', 'false_positive')),
      title text not null,
      description text,
      remediation text,
      source text not null check (source in ('scorecard', 'scanner', 'manual')),
      fingerprint text not null check (length(fingerprint) between 1 and 200),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      resolved_at timestamptz,
      check ((status = 'resolved') = (resolved_at is not null))
    );
    -- The deduplication key: a report of the same finding is an INSERT ... ON CONFLICT on it, so
    -- concurrent reports make one row. Entity ids are unique across tenants; it also serves the
    -- foreign key.
    create unique index security_findings_identity on security_findings (entity_id, type, fingerprint);
    create index security_findings_by_created on security_findings (tenant_id, created_at desc, id desc);
    create index security_findings_by_status on security_findings (tenant_id, status, severity);

    create table governance_actions (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      title text not null,
      description text,
      type text not null,
      status text not null default 'open' check (status in ('open', 'in_progress', 'resolved', 'dismissed', 'wont_fix')),
      priority text not null check (priority in ('critical', 'high', 'medium', 'low')),
      entity_id uuid references entities(id) on delete cascade,
      assigned_to text,
      created_by text not null,
      resolution_notes text,
      due_date date,
      source_type text not null default 'manual' check (source_type in ('manual', 'finding', 'initiative', 'scorecard')),
      source_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    -- An action opened by the platform (for a finding, an initiative) is opened once per source
    -- and entity, soft-deleted or not: a repeated trigger finds this row instead of a second one.
    create unique index governance_actions_once on governance_actions (tenant_id, source_type, source_id, entity_id)
      nulls not distinct where source_type <> 'manual';
    create index governance_actions_by_entity on governance_actions (entity_id);
    create index governance_actions_by_created on governance_actions (tenant_id, created_at desc, id desc)
      where deleted_at is null;
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table governance_actions, security_findings');
}
