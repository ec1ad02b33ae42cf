import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Platform administration: each tenant's free-form settings and the state of its policies (the
// catalogue of policies is code, core/policies/catalogue.ts), feature flags with per-tenant
// overrides, users' notifications and their preferences.
//
// Feature flags are the platform's, not a tenant's: the app role may only read them, and only
// the system role writes them (an operator route, api/admin/featureRoutes.ts), so no tenant
// request, whatever SQL it could run, changes a flag. An override carries the tenant it is for
// under RLS: the app role reads its own tenant's override only.
const TENANT_TABLES = ['tenant_settings', 'tenant_policies', 'notifications', 'notification_preferences'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table tenant_settings (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      settings jsonb not null default '{}' check (jsonb_typeof(settings) = 'object'),
      updated_at timestamptz not null default now()
    );

    -- A row only once an admin changed the policy; the catalogue's defaults apply until then.
    create table tenant_policies (
      tenant_id uuid not null references tenants(id) on delete cascade,
      policy_id text not null,
      enabled boolean not null,
      config jsonb not null default '{}' check (jsonb_typeof(config) = 'object'),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, policy_id)
    );

    create table feature_flags (
      key text primary key check (key ~ '^[a-z0-9][a-z0-9_.-]{0,99}$'),
      name text not null,
      description text not null default '',
      enabled boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table feature_flag_overrides (
      flag_key text not null references feature_flags(key) on delete cascade on update cascade,
      tenant_id uuid not null references tenants(id) on delete cascade,
      enabled boolean not null,
      updated_at timestamptz not null default now(),
      primary key (flag_key, tenant_id)
    );
    create index feature_flag_overrides_by_tenant on feature_flag_overrides (tenant_id);

    create table notifications (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      kind text not null check (kind in ('run_awaiting_approval', 'run_ended', 'api_key_expiring', 'governance_action_assigned')),
      title text not null,
      payload jsonb not null default '{}',
      -- Set by triggers that must notify once per subject (a run's approval step, an expiring
      -- key): a second insert with the same key is skipped.
      dedupe_key text,
      read_at timestamptz,
      -- The list's first sort key (unread first), a column so the keyset paging can compare it.
      unread boolean generated always as (read_at is null) stored,
      created_at timestamptz not null default now(),
      unique (tenant_id, user_id, dedupe_key)
    );
    create index notifications_by_user on notifications (tenant_id, user_id, unread desc, created_at desc, id desc);
    create index notifications_by_user_id on notifications (user_id);

    create table notification_preferences (
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      kind text not null check (kind in ('run_awaiting_approval', 'run_ended', 'api_key_expiring', 'governance_action_assigned')),
      in_app boolean not null,
      primary key (tenant_id, user_id, kind)
    );
    create index notification_preferences_by_user on notification_preferences (user_id);
  `);
  for (const table of [...TENANT_TABLES, 'feature_flag_overrides']) await knex.raw(tenantIsolationSql(table));
  await knex.raw(`
    revoke insert, update, delete on feature_flags, feature_flag_overrides from shipyard_app;
    grant insert, update, delete on feature_flags, feature_flag_overrides to shipyard_system;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table ${['feature_flag_overrides', 'feature_flags', ...TENANT_TABLES].reverse().join(', ')}`);
}
