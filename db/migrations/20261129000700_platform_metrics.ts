import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Platform metrics (GET /insights/platform-metrics, docs/insights.md, Platform metrics).
// platform_api_calls and platform_daily_actors are what the API records, per process, in memory,
// and flushes every few seconds: calls by caller kind, and who called (session users, agents'
// clusters) once per day. platform_metrics_daily is the nightly rollup a read takes its closed
// days from: one row per tenant and day, replaced whenever the day is rolled up again.
const TENANT_TABLES = ['platform_api_calls', 'platform_daily_actors', 'platform_metrics_daily'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table platform_api_calls (
      tenant_id uuid not null references tenants(id) on delete cascade,
      day date not null,
      caller_kind text not null check (caller_kind in ('session', 'api_key', 'agent')),
      calls bigint not null check (calls >= 0),
      primary key (tenant_id, day, caller_kind)
    );

    create table platform_daily_actors (
      tenant_id uuid not null references tenants(id) on delete cascade,
      day date not null,
      actor_kind text not null check (actor_kind in ('user', 'agent')),
      actor_id text not null check (length(actor_id) between 1 and 253),
      primary key (tenant_id, day, actor_kind, actor_id)
    );

    create table platform_metrics_daily (
      tenant_id uuid not null references tenants(id) on delete cascade,
      day date not null,
      active_users integer not null check (active_users >= 0),
      agents_connected integer not null check (agents_connected >= 0),
      api_calls jsonb not null,
      forge_runs jsonb not null,
      searches integer not null check (searches >= 0),
      zero_result_searches integer not null check (zero_result_searches >= 0),
      -- null: the day was rolled up after it had passed, when the catalog as it was is gone.
      catalog jsonb,
      computed_at timestamptz not null default now(),
      primary key (tenant_id, day)
    );
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table platform_metrics_daily, platform_daily_actors, platform_api_calls');
}
