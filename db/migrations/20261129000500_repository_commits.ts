import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Commit history from the source host, kept per repository by the crawl over a window (bus
// factor reads lines changed per author; DORA's lead time reads commit times). The crawl fetches
// only commits newer than the newest kept one, and drops those older than the window.
//
// entity_bus_factors: an entity's bus factor over the default window, recomputed when the
// commits of a repository it links to change, so `/entities?bus_factor=1` and the tenant-wide
// list are index lookups rather than a computation per request. `bus_factor` is null when the
// entity's repositories have no commits in the window.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table repository_commits (
      tenant_id uuid not null references tenants(id) on delete cascade,
      repository_id uuid not null references repositories(id) on delete cascade,
      sha text not null check (sha ~ '^[0-9a-f]{40}$'),
      author_name text not null check (length(author_name) <= 255),
      author_email text not null check (length(author_email) <= 320 and author_email = lower(author_email)),
      authored_at timestamptz not null,
      committed_at timestamptz not null,
      additions integer not null check (additions >= 0),
      deletions integer not null check (deletions >= 0),
      primary key (repository_id, sha)
    );
    create index repository_commits_by_time on repository_commits (tenant_id, repository_id, committed_at);

    create table entity_bus_factors (
      entity_id uuid primary key references entities(id) on delete cascade,
      tenant_id uuid not null references tenants(id) on delete cascade,
      bus_factor integer check (bus_factor >= 1),
      computed_at timestamptz not null default now()
    );
    create index entity_bus_factors_by_value on entity_bus_factors (tenant_id, bus_factor, entity_id);
    -- The entities that link to a repository (its page address as a link's url): the ones whose
    -- bus factor a crawl of it refreshes, found without a scan of the tenant's entities.
    create index entities_by_link on entities using gin (links jsonb_path_ops);
  `);
  await knex.raw(tenantIsolationSql('repository_commits'));
  await knex.raw(tenantIsolationSql('entity_bus_factors'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists entities_by_link; drop table entity_bus_factors; drop table repository_commits');
}
