import type { Knex } from 'knex';
import { ownersOfTeamSql, type TeamColumn } from '../catalog/ownerStore';
import { commitsOfRepositories, type CommitRow } from '../repositories/commitStore';

// SQL of the DORA metrics (docs/insights.md, DORA metrics), in the tenant's transaction (RLS). Every read
// is over a window on an index: deployments by (tenant, time) or (entity, time), finished runs of
// deploying molds likewise, incidents by (tenant, opened or resolved) or by entity. A failed
// change is found from the incidents (few) to the deployments before them, never per deployment.

/** Whose metrics: the tenant's, one entity's, or a team's (the entities it owns). */
export type DoraScope =
  { kind: 'tenant' } | { kind: 'entity'; entityId: string } | { kind: 'team'; team: string; column: TeamColumn };

export interface DoraSpan {
  from: Date;
  to: Date;
}

/** Naming deployments read for lead times, newest first; past it the figure is over the newest only. */
export const LEAD_TIME_MAX_DEPLOYMENTS = 1000;

/** The entity a run names (its `entity_id` parameter, kept as a column by the dora migration). */
const RUN_ENTITY = 'r.entity_ref';

/** The scope's condition on `column` (an entity id as uuid, or as text for `asText`). */
function inScope(q: Knex, query: Knex.QueryBuilder, column: string, scope: DoraScope, asText = false) {
  if (scope.kind === 'entity') return query.whereRaw(`${column} = ?`, [scope.entityId]);
  if (scope.kind === 'tenant') return query;
  // The catalog's one owner rule, given the team itself where a compiled statement gives a marker.
  const owned = q('entities as e')
    .whereIn('e.owner', ownersOfTeamSql(q, { team: scope.team as never }, scope.column))
    .select(q.raw(asText ? 'e.id::text' : 'e.id'));
  return query.whereRaw(`${column} in ?`, [owned]);
}

/** Completed (or failed) runs of deploying molds that name an entity, finished in the span. */
function deployingRuns(q: Knex, span: DoraSpan) {
  return (
    q('runs as r')
      .join('molds as m', 'm.id', 'r.mold_id')
      .where('m.deploys', true)
      // The partial indexes' predicate, spelled as they are.
      .whereRaw(`r.status in ('completed', 'failed') and r.entity_ref is not null`)
      .where('r.finished_at', '>=', span.from)
      .where('r.finished_at', '<', span.to)
  );
}

export interface DoraSources {
  agents: boolean;
  deploying_molds: boolean;
  incident_tool: boolean;
  commits: boolean;
}

/** Which sources the tenant has at all: a missing one makes its figures null, not 0. */
export async function doraSources(db: Knex): Promise<DoraSources> {
  const { rows } = await db.raw<{ rows: DoraSources[] }>(`select
    exists (select 1 from k8s_agents) as agents,
    exists (select 1 from molds where deploys) as deploying_molds,
    exists (select 1 from integrations where type = 'incident-tool-a') as incident_tool,
    exists (select 1 from repository_commits) as commits`);
  return rows[0];
}

export interface DeploymentCounts {
  agent_deployments: number;
  forge_deployments: number;
  failed_forge_runs: number;
}

export async function deploymentCounts(db: Knex, scope: DoraScope, span: DoraSpan): Promise<DeploymentCounts> {
  const agents = inScope(
    db,
    db('k8s_deployments as d')
      .whereNotNull('d.entity_id')
      .where('d.deployed_at', '>=', span.from)
      .where('d.deployed_at', '<', span.to),
    'd.entity_id',
    scope,
  ).count<{ count: string }[]>('* as count');
  const runs = inScope(db, deployingRuns(db, span), RUN_ENTITY, scope, true).select<
    { completed: string; failed: string }[]
  >(
    db.raw(`count(*) filter (where r.status = 'completed') as completed`),
    db.raw(`count(*) filter (where r.status = 'failed') as failed`),
  );
  const [[agent], [run]] = await Promise.all([agents, runs]);
  return {
    agent_deployments: Number(agent.count),
    forge_deployments: Number(run.completed),
    failed_forge_runs: Number(run.failed),
  };
}

/**
 * Deployments in the span followed by an incident on their entity within `failureWindowMs`:
 * from each incident opened in the span to the deployments of its entity in the failure window
 * before it (k8s_deployments_by_entity, runs_by_entity_parameter), counted once each.
 */
export async function failedDeployments(
  db: Knex,
  scope: DoraScope,
  span: DoraSpan,
  failureWindowMs: number,
): Promise<number> {
  const incidents = inScope(
    db,
    db('incidents as i').where('i.opened_at', '>=', span.from).where('i.opened_at', '<', span.to),
    'i.entity_id',
    scope,
  );
  const window = `${failureWindowMs} milliseconds`;
  const [{ count }] = await incidents
    .joinRaw(
      `cross join lateral (
        select d.id from k8s_deployments d
         where d.entity_id = i.entity_id and d.deployed_at <= i.opened_at
           and d.deployed_at >= i.opened_at - ?::interval and d.deployed_at >= ?
        union all
        select r.id from runs r join molds m on m.id = r.mold_id and m.deploys
         where ${RUN_ENTITY} = i.entity_id::text and r.status in ('completed', 'failed')
           and r.status = 'completed' and r.finished_at <= i.opened_at
           and r.finished_at >= i.opened_at - ?::interval and r.finished_at >= ?
      ) as deployment`,
      [window, span.from, window, span.from],
    )
    .countDistinct<{ count: string }[]>('deployment.id as count');
  return Number(count);
}

export interface RestoreFigures {
  resolved: number;
  median_seconds: number | null;
}

/**
 * Incidents resolved in the span: how many and their median open-to-resolve time. An incident the
 * tool reports for several entities is one incident (by integration and the tool's id).
 */
export async function restoreFigures(db: Knex, scope: DoraScope, span: DoraSpan): Promise<RestoreFigures> {
  const resolved = inScope(
    db,
    db('incidents as i')
      .where('i.resolved_at', '>=', span.from)
      .where('i.resolved_at', '<', span.to)
      .distinctOn('i.integration_id', 'i.external_id')
      .select('i.opened_at', 'i.resolved_at'),
    'i.entity_id',
    scope,
  );
  const [row] = await db
    .from(resolved.as('x'))
    .select<{ resolved: string; median_seconds: number | null }[]>(
      db.raw('count(*) as resolved'),
      db.raw(
        'percentile_cont(0.5) within group (order by extract(epoch from x.resolved_at - x.opened_at)) as median_seconds',
      ),
    );
  return {
    resolved: Number(row.resolved),
    median_seconds: row.median_seconds === null ? null : Number(row.median_seconds),
  };
}

export interface NamingDeploymentRow {
  entity_id: string;
  deployed_at: Date;
  ref: string;
}

/**
 * The scope's deployments in the span naming a commit, newest first, at most
 * LEAD_TIME_MAX_DEPLOYMENTS: an agent's by its first image's tag, a run's by its `commit` (else
 * `ref`) parameter, when that is a commit sha or a prefix of 7 or more hex digits (the `commit_ref`
 * columns). Each side is read newest first on its index and cut at the bound before they merge.
 */
export async function namingDeployments(db: Knex, scope: DoraScope, span: DoraSpan): Promise<NamingDeploymentRow[]> {
  const agents = inScope(
    db,
    db('k8s_deployments as d')
      .whereNotNull('d.entity_id')
      .whereNotNull('d.commit_ref')
      .where('d.deployed_at', '>=', span.from)
      .where('d.deployed_at', '<', span.to)
      .orderBy('d.deployed_at', 'desc')
      .limit(LEAD_TIME_MAX_DEPLOYMENTS)
      .select(db.raw('d.entity_id::text as entity_id'), 'd.deployed_at', 'd.commit_ref as ref'),
    'd.entity_id',
    scope,
  );
  const runs = inScope(
    db,
    deployingRuns(db, span)
      .where('r.status', 'completed')
      .whereNotNull('r.commit_ref')
      .orderBy('r.finished_at', 'desc')
      .limit(LEAD_TIME_MAX_DEPLOYMENTS)
      .select(`${RUN_ENTITY} as entity_id`, 'r.finished_at as deployed_at', 'r.commit_ref as ref'),
    RUN_ENTITY,
    scope,
    true,
  );
  return db
    .from(db.raw('(? union all ?) as x', [agents, runs]))
    .orderBy('x.deployed_at', 'desc')
    .limit(LEAD_TIME_MAX_DEPLOYMENTS)
    .select('x.entity_id', 'x.deployed_at', 'x.ref');
}

/**
 * For each entity, its latest deployment naming a commit before the given time (the earliest of
 * its deployments read): what it named bounds what the later ones carry. One index probe per
 * entity and side (k8s_deployments_by_entity, runs_by_entity_ref).
 */
export async function previousNamingDeployments(
  db: Knex,
  before: Map<string, Date>,
): Promise<Map<string, NamingDeploymentRow>> {
  if (before.size === 0) return new Map();
  const { rows } = await db.raw<{ rows: NamingDeploymentRow[] }>(
    `select e.entity_id, p.deployed_at, p.ref
       from unnest(?::text[], ?::timestamptz[]) as e(entity_id, before)
       cross join lateral (
         select * from (
           (select d.deployed_at, d.commit_ref as ref from k8s_deployments d
             where d.entity_id = e.entity_id::uuid and d.commit_ref is not null and d.deployed_at < e.before
             order by d.deployed_at desc limit 1)
           union all
           (select r.finished_at, r.commit_ref from runs r join molds m on m.id = r.mold_id and m.deploys
             where r.entity_ref = e.entity_id and r.status in ('completed', 'failed') and r.status = 'completed'
               and r.commit_ref is not null and r.finished_at < e.before
             order by r.finished_at desc limit 1)
         ) as latest order by deployed_at desc limit 1
       ) as p`,
    [[...before.keys()], [...before.values()]],
  );
  return new Map(rows.map((row) => [row.entity_id, row]));
}

/**
 * The commits since `since` of the repositories each entity links to (a link whose url is a
 * repository's page), by entity.
 */
export async function commitsOfEntities(db: Knex, entityIds: string[], since: Date): Promise<Map<string, CommitRow[]>> {
  const links: { entity_id: string; repository_id: string }[] = await db
    .from(db.raw('entities as e cross join lateral jsonb_array_elements(e.links) as link'))
    .join('repositories as r', (on) => on.on('r.html_url', db.raw(`link->>'url'`)))
    .whereRaw('e.id = any(?::uuid[])', [entityIds])
    .distinct(db.raw('e.id::text as entity_id'), 'r.id as repository_id');
  const commits = await commitsOfRepositories(db, [...new Set(links.map((link) => link.repository_id))], since);
  const byRepository = Map.groupBy(commits, (commit) => commit.repository_id);
  const byEntity = new Map<string, CommitRow[]>();
  for (const link of links)
    byEntity.set(link.entity_id, [
      ...(byEntity.get(link.entity_id) ?? []),
      ...(byRepository.get(link.repository_id) ?? []),
    ]);
  return byEntity;
}
