import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Identity and access: users, teams, roles and their assignments, API keys, agent tokens and
// the audit log. Every table is tenant data under RLS.
const TENANT_TABLES = [
  'users',
  'teams',
  'team_members',
  'team_group_mappings',
  'team_roles',
  'role_bundles',
  'user_roles',
  'group_roles',
  'api_keys',
  'agent_tokens',
  'audit_log',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table users (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      subject text not null,
      email text not null,
      name text not null default '',
      picture text,
      last_login timestamptz,
      created_at timestamptz not null default now(),
      unique (tenant_id, subject),
      unique (tenant_id, email)
    );

    create table teams (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null,
      slug text not null,
      description text not null default '',
      metadata jsonb not null default '{}',
      parent_id uuid references teams(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, slug)
    );

    create table team_members (
      tenant_id uuid not null references tenants(id) on delete cascade,
      team_id uuid not null references teams(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      role text not null check (role in ('lead', 'member', 'viewer')),
      created_at timestamptz not null default now(),
      primary key (team_id, user_id)
    );
    create index team_members_user on team_members (user_id);

    -- Members of an identity-provider group count as members of the team.
    create table team_group_mappings (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      team_id uuid not null references teams(id) on delete cascade,
      group_name text not null,
      provider text not null check (provider in ('idp-a', 'idp-b', 'idp-c', 'idp-d')),
      role text not null default 'member' check (role in ('lead', 'member', 'viewer')),
      created_at timestamptz not null default now(),
      unique (team_id, group_name, provider)
    );

    -- Custom roles. Built-in roles (admin, editor, viewer) are defined in code.
    create table role_bundles (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null,
      description text not null default '',
      permissions text[] not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, name)
    );

    -- A role is referenced by its key: a built-in role's name, or a role bundle's id.
    create table team_roles (
      tenant_id uuid not null references tenants(id) on delete cascade,
      team_id uuid not null references teams(id) on delete cascade,
      role text not null,
      created_at timestamptz not null default now(),
      primary key (team_id, role)
    );

    create table user_roles (
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      role text not null,
      created_at timestamptz not null default now(),
      primary key (user_id, role)
    );

    create table group_roles (
      tenant_id uuid not null references tenants(id) on delete cascade,
      group_name text not null,
      role text not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, group_name, role)
    );

    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      name text not null,
      description text not null default '',
      prefix text not null,
      token_hash text not null,
      scopes text[] not null,
      expires_at timestamptz,
      last_used_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index api_keys_prefix on api_keys (prefix);
    create index api_keys_active_per_user on api_keys (user_id) where revoked_at is null;

    -- Agent tokens are long random secrets, so a SHA-256 digest is a safe, fast lookup key.
    create table agent_tokens (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      token_sha256 text not null unique,
      revoked_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index agent_tokens_cluster on agent_tokens (tenant_id, cluster_id);

    create table audit_log (
      id bigint generated always as identity primary key,
      tenant_id uuid not null references tenants(id) on delete cascade,
      event_type text not null,
      actor text not null,
      actor_type text not null check (actor_type in ('user', 'api_key', 'agent', 'system')),
      action text not null,
      status text not null check (status in ('success', 'failure', 'partial')),
      error_message text,
      target_type text,
      target_id text,
      metadata jsonb not null default '{}',
      created_at timestamptz not null default now()
    );
    create index audit_log_recent on audit_log (tenant_id, created_at desc, id desc);
    create index audit_log_target on audit_log (tenant_id, target_type, target_id);
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TENANT_TABLES].reverse()) await knex.raw(`drop table ${table}`);
}
