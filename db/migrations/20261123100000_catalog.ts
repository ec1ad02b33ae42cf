import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// The catalog: entities, their relations, their changelog and their manifests; molds learn
// which entity types they apply to (an entity's quick actions).
const TENANT_TABLES = ['entities', 'entity_relations', 'entity_changelog', 'manifests'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table entities (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      service_id text not null check (service_id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
      name text not null,
      type text not null check (type in ('service', 'library', 'api', 'website', 'tool', 'infrastructure',
        'platform', 'mobile-app', 'data-pipeline', 'ml-model', 'documentation')),
      lifecycle text check (lifecycle in ('experimental', 'development', 'production', 'deprecated')),
      owner text,
      description text,
      tier text check (tier in ('tier1', 'tier2', 'tier3', 'tier4')),
      tags text[] not null default '{}',
      links jsonb not null default '[]',
      source text not null default 'api' check (source in ('kubernetes', 'manifest', 'api', 'vcs-host-a', 'manual')),
      readme text,
      readme_format text check (readme_format in ('markdown', 'html')),
      last_activity_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- The list's search filter: word prefixes of the name, service id and description
      -- ('simple' keeps words as written; a hyphenated id is also split into its parts).
      search_vector tsvector generated always as (
        to_tsvector('simple', name || ' ' || service_id || ' ' || coalesce(description, ''))
      ) stored,
      unique (tenant_id, service_id)
    );
    -- GET /entities orders by (name, id); each equality filter gets an index in that order, so a
    -- keyset page of a filtered list is a range scan of one index.
    create index entities_by_name on entities (tenant_id, name, id);
    create index entities_by_type on entities (tenant_id, type, name, id);
    create index entities_by_lifecycle on entities (tenant_id, lifecycle, name, id);
    create index entities_by_owner on entities (tenant_id, owner, name, id);
    create index entities_by_tier on entities (tenant_id, tier, name, id);
    create index entities_by_source on entities (tenant_id, source, name, id);
    create index entities_tags on entities using gin (tags);
    create index entities_search on entities using gin (search_vector);
    -- Zombies: the least recently active first.
    create index entities_by_activity on entities (tenant_id, last_activity_at, id);

    -- One row per relation, read from either end: outgoing by the primary key, incoming by
    -- entity_relations_to.
    create table entity_relations (
      tenant_id uuid not null references tenants(id) on delete cascade,
      from_entity_id uuid not null references entities(id) on delete cascade,
      to_entity_id uuid not null references entities(id) on delete cascade,
      type text not null check (type in ('depends_on', 'provides_api', 'consumes_api', 'part_of')),
      created_at timestamptz not null default now(),
      primary key (from_entity_id, type, to_entity_id)
    );
    create index entity_relations_to on entity_relations (to_entity_id);

    create table entity_changelog (
      id bigint generated always as identity primary key,
      tenant_id uuid not null references tenants(id) on delete cascade,
      entity_id uuid not null references entities(id) on delete cascade,
      action text not null check (action in ('created', 'updated')),
      field text,
      old_value text,
      new_value text,
      actor text not null,
      created_at timestamptz not null default now()
    );
    -- Led by the entity (ids are unique across tenants), which also serves the foreign key.
    create index entity_changelog_by_entity on entity_changelog (entity_id, created_at desc, id desc);

    create table manifests (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      entity_id uuid not null unique references entities(id) on delete cascade,
      service_id text not null,
      manifest_type text not null check (manifest_type in ('shipyard', 'backstage')),
      content text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, service_id)
    );

    alter table molds add column entity_types text[] not null default '{}';
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table molds drop column entity_types');
  for (const table of [...TENANT_TABLES].reverse()) await knex.raw(`drop table ${table}`);
}
