import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';
import { ownersOfTeamSql } from '../catalog/ownerStore';
import { idOr, UUID } from '../ids';
import { invalidCursor, type KeysetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import { SIGNAL_COUNT, SIGNAL_SQL, SIGNALS_ARRAY_SQL, STATUS_SQL, ZOMBIE_SQL } from './signals';
import type { WorkloadStatus, ZombieSignal } from './types';

// Operations resources (docs/operations-views.md): a workload with what is known around it, the
// entity it belongs to (and so its owning team), the GitOps resource that manages it (the one of
// the same cluster, namespace, kind and name, as Argo CD and Flux report their managed objects)
// and its zombie signals. /operations/resources, /operations/zombies and the entity's
// /resources and /zombies list them, in workload id order (k8s_workloads_by_id).

export interface ResourceFilter {
  cluster?: string;
  /** A team's slug or id: workloads of entities the team owns (by its slug or a member's email). */
  team?: string;
  kind?: string;
  /** Without it, gone workloads are left out. */
  status?: WorkloadStatus;
  /** A prefix of the name. */
  search?: string;
  signal?: ZombieSignal;
  has_gitops?: boolean;
  /** Only the workloads of this entity (by id). */
  entity?: string;
  /** Only workloads with at least one zombie signal. */
  zombie?: boolean;
}

interface Shape {
  cluster: boolean;
  team: 'id' | 'slug' | null;
  kind: boolean;
  status: boolean;
  search: boolean;
  signal: ZombieSignal | null;
  hasGitops: boolean | null;
  entity: boolean;
  zombie: boolean;
  after: boolean;
}

type Values = Required<Omit<ResourceFilter, 'signal' | 'has_gitops' | 'zombie'>> & {
  /** Now minus the zombie age, as an ISO timestamp. */
  cutoff: string;
  afterId: string;
  limit: number;
};

const cutoffs = (cutoff: never, count: number) => Array.from({ length: count }, () => cutoff);

function filteredResources(q: Knex, v: Placeholders<Values>, shape: Shape): Knex.QueryBuilder {
  const query = q('k8s_workloads as w')
    .leftJoin('entities as e', 'e.id', 'w.entity_id')
    .leftJoin('gitops_resources as g', (on) =>
      on
        .on('g.tenant_id', 'w.tenant_id')
        .andOn('g.cluster_id', 'w.cluster_id')
        .andOn('g.namespace', 'w.namespace')
        .andOn('g.kind', 'w.kind')
        .andOn('g.name', 'w.name')
        .andOnNull('g.gone_at'),
    );
  if (shape.cluster) query.where('w.cluster_id', v.cluster);
  if (shape.team !== null) query.whereIn('e.owner', ownersOfTeamSql(q, v, shape.team));
  if (shape.kind) query.where('w.kind', v.kind);
  if (shape.status) query.whereRaw(`${STATUS_SQL} = ?`, [v.status]);
  else query.whereNull('w.gone_at');
  if (shape.search) query.whereRaw('starts_with(w.name, lower(?))', [v.search]);
  if (shape.signal !== null) query.whereRaw(SIGNAL_SQL[shape.signal], [v.cutoff]);
  if (shape.hasGitops !== null) query[shape.hasGitops ? 'whereNotNull' : 'whereNull']('g.id');
  if (shape.entity) query.where('w.entity_id', v.entity);
  if (shape.zombie) query.whereRaw(ZOMBIE_SQL, cutoffs(v.cutoff, SIGNAL_COUNT));
  return query;
}

interface ResourceRow {
  id: string;
  cluster_id: string;
  namespace: string;
  kind: string;
  name: string;
  status: WorkloadStatus;
  signals: ZombieSignal[];
  replicas: number;
  ready_replicas: number;
  images: string[];
  entity_id: string | null;
  entity_service_id: string | null;
  entity_name: string | null;
  entity_owner: string | null;
  gitops_id: string | null;
  gitops_tool: string | null;
  gitops_sync_status: string | null;
  gitops_health_status: string | null;
  gitops_revision: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
  gone_at: Date | null;
}

const toResource = (row: ResourceRow) => ({
  id: row.id,
  cluster_id: row.cluster_id,
  namespace: row.namespace,
  kind: row.kind,
  name: row.name,
  status: row.status,
  signals: row.signals,
  replicas: row.replicas,
  ready_replicas: row.ready_replicas,
  images: row.images,
  entity:
    row.entity_id === null
      ? null
      : { id: row.entity_id, service_id: row.entity_service_id!, name: row.entity_name!, owner: row.entity_owner },
  gitops:
    row.gitops_id === null
      ? null
      : {
          id: row.gitops_id,
          tool: row.gitops_tool,
          sync_status: row.gitops_sync_status,
          health_status: row.gitops_health_status,
          revision: row.gitops_revision,
        },
  first_seen_at: toIso(row.first_seen_at),
  last_seen_at: toIso(row.last_seen_at),
  gone_at: toIsoOrNull(row.gone_at),
});

export type OperationsResource = ReturnType<typeof toResource>;

const resourcePage = statement<ResourceRow, Values, Shape>((q, v, shape) => {
  const query = filteredResources(q, v, shape);
  if (shape.after) query.where('w.id', '>', v.afterId);
  return query
    .orderBy('w.id')
    .limit(v.limit)
    .select([
      'w.id',
      'w.cluster_id',
      'w.namespace',
      'w.kind',
      'w.name',
      q.raw(`${STATUS_SQL} as status`),
      q.raw(`${SIGNALS_ARRAY_SQL} as signals`, cutoffs(v.cutoff, SIGNAL_COUNT)),
      'w.replicas',
      'w.ready_replicas',
      'w.images',
      'w.entity_id',
      'e.service_id as entity_service_id',
      'e.name as entity_name',
      'e.owner as entity_owner',
      'g.id as gitops_id',
      'g.tool as gitops_tool',
      'g.sync_status as gitops_sync_status',
      'g.health_status as gitops_health_status',
      'g.revision as gitops_revision',
      'w.first_seen_at',
      'w.last_seen_at',
      'w.gone_at',
    ]);
});

const resourceCount = statement<{ count: number }, Values, Shape>((q, v, shape) =>
  filteredResources(q, v, shape).first(q.raw('count(*)::int as count')),
);

const workloadExists = statement<{ id: string }, { id: string }>((q, { id }) =>
  q('k8s_workloads').where('id', id).first('id'),
);

/**
 * A shape D page of resources after the window's position (a workload id) and the filtered
 * total. The position must be a workload of the tenant: a cursor that is not (altered, or
 * issued to another tenant or list) is a 400. Workloads are kept when gone, so a cursor stays
 * valid while its cluster's agent exists.
 */
export async function listResources(
  db: Knex,
  filter: ResourceFilter,
  window: KeysetWindow,
  zombieAgeMs: number,
): Promise<{ rows: { id: string; item: OperationsResource }[]; total: number }> {
  if (window.afterId !== null) {
    if (!UUID.test(window.afterId) || !(await workloadExists.first(db, { id: window.afterId }))) throw invalidCursor();
  }
  const shape: Shape = {
    cluster: filter.cluster !== undefined,
    team: filter.team === undefined ? null : idOr(filter.team, 'slug'),
    kind: filter.kind !== undefined,
    status: filter.status !== undefined,
    search: filter.search !== undefined,
    signal: filter.signal ?? null,
    hasGitops: filter.has_gitops ?? null,
    entity: filter.entity !== undefined,
    zombie: filter.zombie ?? false,
    after: window.afterId !== null,
  };
  const values = {
    ...filter,
    cutoff: new Date(Date.now() - zombieAgeMs).toISOString(),
    afterId: window.afterId ?? undefined,
    limit: window.limit + 1,
  } as Values;
  const rows = await resourcePage.rows(db, values, shape);
  const [{ count }] = await resourceCount.rows(db, values, { ...shape, after: false });
  return { rows: rows.map((row) => ({ id: row.id, item: toResource(row) })), total: count };
}
