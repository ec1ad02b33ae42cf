import type { Knex } from 'knex';

// DORA metrics (docs/insights/dora.md): a mold can be marked as deploying, so its completed runs
// count as deployments of the entity their `entity_id` parameter names; and the indexes that keep
// a window's reads index-backed at the tenant scope (deployments, finished runs, incidents opened
// and resolved) and at an entity's (runs by the entity they name).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table molds add column deploys boolean not null default false;
    create index k8s_deployments_by_time on k8s_deployments (tenant_id, deployed_at) where entity_id is not null;
    create index runs_finished on runs (tenant_id, finished_at) where status in ('completed', 'failed');
    create index runs_by_entity_parameter on runs ((parameters->>'entity_id'), finished_at)
      where status in ('completed', 'failed') and parameters \\? 'entity_id';
    create index incidents_opened on incidents (tenant_id, opened_at);
    create index incidents_resolved on incidents (tenant_id, resolved_at) where resolved_at is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index incidents_resolved;
    drop index incidents_opened;
    drop index runs_by_entity_parameter;
    drop index runs_finished;
    drop index k8s_deployments_by_time;
    alter table molds drop column deploys;
  `);
}
