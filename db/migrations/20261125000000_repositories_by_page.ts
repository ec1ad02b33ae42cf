import type { Knex } from 'knex';

// An entity's README and docs are found through the repositories its links point at, by page
// address. Its own migration: databases that ran the repositories migration before this index
// was written there get it too; where that edited migration already made it, nothing happens.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists repositories_by_page on repositories (tenant_id, html_url)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists repositories_by_page');
}
