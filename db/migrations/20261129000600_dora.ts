import type { Knex } from 'knex';

// DORA metrics (docs/insights.md, DORA metrics). A mold can be marked as deploying: its completed runs
// are deployments of the entity their `entity_id` parameter names. What a deployment names is
// kept as its row is written (generated columns), so a window's read never parses images or
// parameters and compares plain text, which row-level security lets an index answer (a jsonb
// operator is not leakproof: under RLS it is only ever a filter). The indexes keep each read over
// a window index-backed at the tenant scope (deployments, naming deployments, finished runs,
// incidents opened and resolved) and at an entity's (runs by the entity they name).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table molds add column deploys boolean not null default false;

    -- The commit an agent's deployment names: its first image's tag when that is a sha or a 7+ digit prefix.
    alter table k8s_deployments add column commit_ref text
      generated always as (substring(images[1] from ':([0-9a-f]{7,40})$')) stored;
    create index k8s_deployments_by_time on k8s_deployments (tenant_id, deployed_at) where entity_id is not null;
    create index k8s_deployments_naming on k8s_deployments (tenant_id, deployed_at)
      where entity_id is not null and commit_ref is not null;

    -- A run's entity (parameter entity_id) and commit (parameter commit, else ref, when a sha or prefix).
    alter table runs add column entity_ref text generated always as (parameters->>'entity_id') stored;
    alter table runs add column commit_ref text generated always as (
      case when coalesce(parameters->>'commit', parameters->>'ref') ~ '^[0-9a-f]{7,40}$'
        then coalesce(parameters->>'commit', parameters->>'ref') end) stored;
    create index runs_finished on runs (tenant_id, finished_at)
      where status in ('completed', 'failed') and entity_ref is not null;
    create index runs_by_entity_ref on runs (entity_ref, finished_at) where status in ('completed', 'failed');

    create index incidents_opened on incidents (tenant_id, opened_at);
    create index incidents_resolved on incidents (tenant_id, resolved_at) where resolved_at is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index incidents_resolved;
    drop index incidents_opened;
    drop index runs_by_entity_ref;
    drop index runs_finished;
    alter table runs drop column commit_ref, drop column entity_ref;
    drop index k8s_deployments_naming;
    drop index k8s_deployments_by_time;
    alter table k8s_deployments drop column commit_ref;
    alter table molds drop column deploys;
  `);
}
