import type { Knex } from 'knex';

// The re-score queue (scorecard_queue): triggers add an entity's row when it changes; a
// configuration change or the nightly run adds a row without an entity, meaning the whole tenant.
// Rows are claimed and deleted in the transaction that writes the scores, so a failed batch
// leaves them for the retry.

export const SCORECARD_QUEUE_CHANNEL = 'scorecard_queue';

/** Asks for every entity of the tenant to be scored again (in the caller's transaction). */
export async function requestFullRescore(db: Knex, tenantId: string): Promise<void> {
  await db('scorecard_queue').insert({ tenant_id: tenantId, entity_id: null });
  await db.raw('select pg_notify(?, ?)', [SCORECARD_QUEUE_CHANNEL, '']);
}

/** Asks for these entities to be scored again: what a check reads changed outside the entity (its bus factor). */
export async function requestRescoreOf(db: Knex, tenantId: string, entityIds: string[]): Promise<void> {
  if (entityIds.length === 0) return;
  await db('scorecard_queue').insert(entityIds.map((entityId) => ({ tenant_id: tenantId, entity_id: entityId })));
  await db.raw('select pg_notify(?, ?)', [SCORECARD_QUEUE_CHANNEL, '']);
}

/** As requestFullRescore for every tenant (the nightly run; the system role). */
export async function requestFullRescoreOfEveryTenant(system: Knex): Promise<number> {
  const { rowCount } = await system.raw<{ rowCount: number }>(
    `insert into scorecard_queue (tenant_id, entity_id) select id, null from tenants`,
  );
  await system.raw('select pg_notify(?, ?)', [SCORECARD_QUEUE_CHANNEL, '']);
  return rowCount;
}

/**
 * Claims the tenant's oldest `limit` queued rows (skipping rows another transaction holds): the
 * distinct entities they name, whether one asked for the whole tenant, and whether more wait.
 */
export async function claimQueued(
  db: Knex,
  limit: number,
): Promise<{ entityIds: string[]; full: boolean; more: boolean }> {
  const { rows } = await db.raw<{ rows: { entity_id: string | null }[] }>(
    `delete from scorecard_queue where id in (
       select id from scorecard_queue where tenant_id = app_current_tenant()
       order by id limit ? for update skip locked
     ) returning entity_id`,
    [limit],
  );
  const more =
    rows.length === limit &&
    (await db('scorecard_queue').whereRaw('tenant_id = app_current_tenant()').first('id')) !== undefined;
  const entityIds = [...new Set(rows.flatMap((row) => (row.entity_id ? [row.entity_id] : [])))];
  return { entityIds, full: rows.some((row) => row.entity_id === null), more };
}

/** Tenants with queued rows (the system role): each one's scoring workflow is woken. */
export async function tenantsWithQueuedWork(system: Knex): Promise<string[]> {
  // A loose index scan: one index probe per tenant, however many rows each has queued.
  const { rows } = await system.raw<{ rows: { tenant_id: string }[] }>(`
    with recursive t as (
      (select tenant_id from scorecard_queue order by tenant_id limit 1)
      union all
      select (select q.tenant_id from scorecard_queue q where q.tenant_id > t.tenant_id order by q.tenant_id limit 1)
      from t where t.tenant_id is not null
    )
    select tenant_id from t where tenant_id is not null`);
  return rows.map((row) => row.tenant_id);
}
