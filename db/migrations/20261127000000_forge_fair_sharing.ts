import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Fair sharing of the forge pool: per-tenant overrides of the run limits (defaults in config),
// and the slots runs hold or wait for, as leases (core/forge/slotStore.ts).
const TENANT_TABLES = ['forge_tenant_limits', 'forge_slots'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A null column takes the configured default.
    create table forge_tenant_limits (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      running_runs integer check (running_runs > 0),
      action_slots integer check (action_slots > 0),
      run_starts_per_minute integer check (run_starts_per_minute > 0),
      updated_at timestamptz not null default now()
    );

    -- One row per run and kind: waiting while granted_at is null, held once granted. Both
    -- expire: a waiter that stops renewing is no longer queued, an action slot whose holder is
    -- gone frees itself; a run slot (expires_at null) is held until its run ends.
    create table forge_slots (
      tenant_id uuid not null references tenants(id) on delete cascade,
      run_id uuid not null references runs(id) on delete cascade,
      kind text not null check (kind in ('run', 'action')),
      workflow_id text not null,
      -- Its place in the queue: for a run slot the run's creation, for an action slot the request's.
      requested_at timestamptz not null,
      granted_at timestamptz,
      expires_at timestamptz,
      primary key (run_id, kind)
    );
    create index forge_slots_queue on forge_slots (tenant_id, kind, requested_at);

    -- The reconciliation reads every tenant's unfinished runs.
    create index runs_unfinished on runs (created_at, id) where status in ('pending', 'running', 'awaiting_approval');
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index runs_unfinished');
  for (const table of [...TENANT_TABLES].reverse()) await knex.raw(`drop table ${table}`);
}
