import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Repositories the crawler found through a tenant's vcs-host-a integration, and the crawl's
// tracking of their documentation files. Documentation content lives only in the search engine
// (spec, data ownership rule 2): a file's row keeps its path, content hash and whether the
// engine holds the current version, never the content.
const OPERATIONS = { insert: 'new_rows', update: 'new_rows', delete: 'old_rows' } as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table repositories (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      integration_id uuid not null references integrations(id) on delete cascade,
      provider text not null check (provider in ('vcs-host-a')),
      full_name text not null check (full_name ~ '^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$' and length(full_name) <= 255),
      owner text not null,
      name text not null,
      description text,
      language text,
      topics text[] not null default '{}',
      fork boolean not null default false,
      archived boolean not null default false,
      private boolean not null default false,
      default_branch text not null default 'main',
      html_url text,
      -- The crawl: when it is due again, how the last one went.
      crawl_status text not null default 'pending' check (crawl_status in ('pending', 'crawled', 'failed')),
      crawl_error text,
      next_crawl_at timestamptz not null default now(),
      last_crawled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, full_name)
    );
    create index repositories_by_name on repositories (tenant_id, name, id);
    create index repositories_due on repositories (next_crawl_at);
    -- Deleting an integration cascades to its repositories.
    create index repositories_by_integration on repositories (integration_id);
    create index repositories_topics on repositories using gin (topics);

    create table doc_crawl_status (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      repository_id uuid not null references repositories(id) on delete cascade,
      path text not null,
      content_hash text not null,
      indexed boolean not null default false,
      crawled_at timestamptz not null default now(),
      unique (repository_id, path)
    );
    create index doc_crawl_status_by_tenant on doc_crawl_status (tenant_id, indexed);
  `);
  await knex.raw(tenantIsolationSql('repositories'));
  await knex.raw(tenantIsolationSql('doc_crawl_status'));
  // Repositories are searchable: the same outbox triggers as the other searchable tables.
  await knex.raw(`
    alter table search_outbox drop constraint search_outbox_collection_check;
    alter table search_outbox add constraint search_outbox_collection_check
      check (collection in ('entities', 'repositories', 'molds', 'users', 'teams'));
  `);
  for (const [operation, transition] of Object.entries(OPERATIONS)) {
    await knex.raw(`
      create trigger repositories_search_outbox_${operation} after ${operation} on repositories
        referencing ${transition === 'new_rows' ? 'new' : 'old'} table as ${transition}
        for each statement execute function search_outbox_enqueue('repositories')
    `);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table doc_crawl_status;
    drop table repositories;
    delete from search_outbox where collection = 'repositories';
    alter table search_outbox drop constraint search_outbox_collection_check;
    alter table search_outbox add constraint search_outbox_collection_check
      check (collection in ('entities', 'molds', 'users', 'teams'));
  `);
}
