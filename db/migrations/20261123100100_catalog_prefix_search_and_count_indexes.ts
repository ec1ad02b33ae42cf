import type { Knex } from 'knex';

// Measured on 100k entities of one tenant. Under row-level security a leaky operator (tsvector
// match, array containment, lower()) is never an index condition, so the search filter's GIN
// index went unused and every search read all of the tenant's rows: search becomes a
// case-insensitive prefix of the name or service id (starts_with is leakproof, and a stored
// lowercase name keeps the condition on a plain column). And a scan of every row pays the
// policy's tenant check per row: the counts behind /stats, /stats/unowned and the zombie total
// read narrow indexes that hold their columns instead (index-only scans).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table entities drop column search_vector;
    alter table entities add column name_lower text generated always as (lower(name)) stored;
    create index entities_name_prefix on entities (tenant_id, name_lower text_pattern_ops);
    create index entities_service_id_prefix on entities (tenant_id, service_id text_pattern_ops);

    create index entities_counts on entities (tenant_id, type, lifecycle, tier) include (owner);
    drop index entities_by_activity;
    create index entities_by_activity on entities (tenant_id, last_activity_at, id) include (created_at, lifecycle, type);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index entities_by_activity;
    create index entities_by_activity on entities (tenant_id, last_activity_at, id);
    drop index entities_counts;

    drop index entities_service_id_prefix;
    drop index entities_name_prefix;
    alter table entities drop column name_lower;
    alter table entities add column search_vector tsvector generated always as (
      to_tsvector('simple', name || ' ' || service_id || ' ' || coalesce(description, ''))
    ) stored;
    create index entities_search on entities using gin (search_vector);
  `);
}
