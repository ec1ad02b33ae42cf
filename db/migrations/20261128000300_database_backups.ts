import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Database backups (POST /database/backup): one row per pg_dump, kept under the platform
// tenant, whose operators alone start and list them, so the table is isolated like every other.
//
// pg_dump reads through the system role (BYPASSRLS: a dump under row-level security would be
// empty, or refused); it also reads every sequence's position, which that role could not.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table database_backups (
      id uuid primary key,
      tenant_id uuid not null references tenants(id) on delete cascade,
      status text not null default 'running' check (status in ('running', 'completed', 'failed')),
      file_name text not null,
      requested_by text not null,
      size_bytes bigint,
      sha256 text,
      duration_ms integer,
      error text,
      started_at timestamptz not null default now(),
      completed_at timestamptz
    );
    -- GET /database/backups: newest first.
    create index database_backups_newest on database_backups (tenant_id, started_at desc, id desc);
  `);
  await knex.raw(tenantIsolationSql('database_backups'));
  await knex.raw(`
    grant select on all sequences in schema public to shipyard_system;
    alter default privileges for role shipyard_owner in schema public grant select on sequences to shipyard_system;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter default privileges for role shipyard_owner in schema public revoke select on sequences from shipyard_system;
    revoke select on all sequences in schema public from shipyard_system;
    drop table database_backups;
  `);
}
