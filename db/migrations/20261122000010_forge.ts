import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Forge: molds (workflow templates) and runs (their executions, each a Temporal workflow).
const TENANT_TABLES = ['molds', 'runs', 'run_steps', 'run_logs', 'run_decisions'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table molds (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      slug text not null,
      name text not null,
      description text not null default '',
      category text,
      icon text,
      published boolean not null default false,
      -- Bumped on every change; a run records the version (and a copy) it started with.
      version integer not null default 1,
      parameters jsonb not null default '[]',
      actions jsonb not null default '[]',
      requires_approval boolean not null default false,
      created_by text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, slug)
    );
    create index molds_category on molds (tenant_id, category);

    create table runs (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      mold_id uuid references molds(id) on delete set null,
      mold_slug text not null,
      mold_version integer not null,
      -- The mold as it was when the run started: later edits never change a started run.
      mold_snapshot jsonb not null,
      parameters jsonb not null,
      status text not null default 'pending'
        check (status in ('pending', 'running', 'completed', 'failed', 'cancelled', 'awaiting_approval')),
      error text,
      started_by text not null,
      workflow_id text not null,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz
    );
    create index runs_recent on runs (tenant_id, created_at desc, id desc);
    create index runs_by_mold on runs (tenant_id, mold_slug, created_at desc);
    create index runs_by_status on runs (tenant_id, status);

    create table run_steps (
      tenant_id uuid not null references tenants(id) on delete cascade,
      run_id uuid not null references runs(id) on delete cascade,
      position integer not null,
      name text not null,
      type text not null,
      status text not null default 'pending'
        check (status in ('pending', 'running', 'completed', 'failed', 'cancelled', 'skipped', 'awaiting_approval')),
      error text,
      output jsonb,
      started_at timestamptz,
      finished_at timestamptz,
      primary key (run_id, position)
    );

    create table run_logs (
      id bigint generated always as identity primary key,
      tenant_id uuid not null references tenants(id) on delete cascade,
      run_id uuid not null references runs(id) on delete cascade,
      step_position integer,
      level text not null default 'info' check (level in ('info', 'warn', 'error')),
      message text not null,
      created_at timestamptz not null default now()
    );
    create index run_logs_by_run on run_logs (run_id, id);

    -- Who approved, rejected or cancelled a run, when, and why.
    create table run_decisions (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      run_id uuid not null references runs(id) on delete cascade,
      decision text not null check (decision in ('approve', 'reject', 'cancel')),
      actor text not null,
      comment text,
      created_at timestamptz not null default now()
    );
    create index run_decisions_by_run on run_decisions (run_id, created_at);
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TENANT_TABLES].reverse()) await knex.raw(`drop table ${table}`);
}
