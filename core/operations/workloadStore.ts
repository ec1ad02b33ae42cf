import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';
import { snapshotFilter, type SnapshotFilter } from './snapshotFilter';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import { countsStatement } from './counting';
import { STATUS_SQL } from './signals';
import type { WorkloadCondition, WorkloadStatus } from './types';

// The workloads the agents pushed, as the operations views read them: the list, one workload,
// and the tenant-wide stats (statuses, images, replicas).

interface WorkloadRow {
  id: string;
  cluster_id: string;
  namespace: string;
  kind: string;
  name: string;
  replicas: number;
  ready_replicas: number;
  images: string[];
  status: WorkloadStatus;
  entity_id: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
  gone_at: Date | null;
}

const workloadColumns = (q: Knex) => [
  'w.id',
  'w.cluster_id',
  'w.namespace',
  'w.kind',
  'w.name',
  'w.replicas',
  'w.ready_replicas',
  'w.images',
  'w.entity_id',
  'w.first_seen_at',
  'w.last_seen_at',
  'w.gone_at',
  q.raw(`${STATUS_SQL} as status`),
];

const toWorkload = (row: WorkloadRow) => ({
  id: row.id,
  cluster_id: row.cluster_id,
  namespace: row.namespace,
  kind: row.kind,
  name: row.name,
  status: row.status,
  replicas: row.replicas,
  ready_replicas: row.ready_replicas,
  images: row.images,
  entity_id: row.entity_id,
  first_seen_at: toIso(row.first_seen_at),
  last_seen_at: toIso(row.last_seen_at),
  gone_at: toIsoOrNull(row.gone_at),
});

export type Workload = ReturnType<typeof toWorkload>;

export interface WorkloadFilter extends SnapshotFilter {
  cluster?: string;
  namespace?: string;
  kind?: string;
}

const workloadFilter = snapshotFilter('k8s_workloads', 'w', {
  cluster: 'w.cluster_id',
  namespace: 'w.namespace',
  kind: 'w.kind',
});

type FilterValues = Required<Omit<WorkloadFilter, 'include_gone'>>;

const NAME_ORDER: KeysetOrder = {
  columns: [
    { column: 'w.name', kind: 'text' },
    { column: 'w.id', kind: 'uuid' },
  ],
  direction: 'asc',
};

const workloadPage = keysetStatement({
  order: NAME_ORDER,
  build: (q, values: Placeholders<FilterValues>, shape: ReturnType<typeof workloadFilter.shapeOf>) =>
    workloadFilter.apply(q, values, shape).select(workloadColumns(q)),
  toItem: toWorkload,
});

/** A page of the tenant's workloads in (name, id) order: the k8s_workloads_by_name index. */
export function listWorkloads(db: Knex, filter: WorkloadFilter, window: KeysetWindow): Promise<KeysetRow<Workload>[]> {
  return workloadPage(db, window, filter as FilterValues, workloadFilter.shapeOf(filter));
}

type WorkloadDetailRow = WorkloadRow & {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  conditions: WorkloadCondition[];
  entity_service_id: string | null;
  entity_name: string | null;
  entity_owner: string | null;
};

const workloadById = statement<WorkloadDetailRow, { id: string }>((q, { id }) =>
  q('k8s_workloads as w')
    .leftJoin('entities as e', 'e.id', 'w.entity_id')
    .where('w.id', id)
    .first([
      ...workloadColumns(q),
      'w.labels',
      'w.annotations',
      'w.conditions',
      'e.service_id as entity_service_id',
      'e.name as entity_name',
      'e.owner as entity_owner',
    ]),
);

export async function getWorkload(db: Knex, id: string) {
  const row = await workloadById.first(db, { id });
  if (!row) return undefined;
  return {
    ...toWorkload(row),
    labels: row.labels,
    annotations: row.annotations,
    // Only the fields the push defines: the response declares exactly them.
    conditions: row.conditions.map(({ type, status, reason }) => ({ type, status, reason })),
    entity:
      row.entity_id === null
        ? null
        : { id: row.entity_id, service_id: row.entity_service_id!, name: row.entity_name!, owner: row.entity_owner },
  };
}

export type WorkloadDetail = NonNullable<Awaited<ReturnType<typeof getWorkload>>>;

const presentCounts = countsStatement('k8s_workloads as w where w.gone_at is null', {
  by_status: STATUS_SQL,
  by_kind: 'w.kind',
  by_cluster: 'w.cluster_id',
  by_namespace: 'w.namespace',
});

const otherCounts = statement<{ gone: number; unowned: number }>((q) =>
  q('k8s_workloads as w').first(
    q.raw('(count(*) filter (where w.gone_at is not null))::int as gone'),
    q.raw('(count(*) filter (where w.gone_at is null and w.entity_id is null))::int as unowned'),
  ),
);

/** Present workloads by status, kind, cluster and namespace; and how many are gone or belong to no entity. */
export async function workloadStats(db: Knex) {
  const counts = await presentCounts(db);
  const other = await otherCounts.first(db);
  return { ...counts, gone: other?.gone ?? 0, unowned: other?.unowned ?? 0 };
}

/** How many images the image stats list (those most workloads run first). */
export const IMAGES_MAX = 100;

// An image is pinned when it names a tag other than `latest`, or a digest.
const UNPINNED_SQL = `(i.image !~ '(:[^/:]+|@sha256:[0-9a-f]+)$' or i.image ~ ':latest$')`;

const imageCounts = statement<{ image: string; workloads: number; clusters: number; unpinned: boolean }>((q) =>
  q.raw(
    `select i.image, count(distinct w.id)::int as workloads, count(distinct w.cluster_id)::int as clusters,
       bool_or(${UNPINNED_SQL}) as unpinned
     from k8s_workloads w cross join unnest(w.images) as i(image)
     where w.gone_at is null
     group by i.image order by workloads desc, i.image limit ${IMAGES_MAX}`,
  ),
);

const imageTotals = statement<{ distinct_images: number; unpinned_images: number; unpinned_workloads: number }>((q) =>
  q.raw(
    `select count(distinct i.image)::int as distinct_images,
       count(distinct i.image) filter (where ${UNPINNED_SQL})::int as unpinned_images,
       count(distinct w.id) filter (where ${UNPINNED_SQL})::int as unpinned_workloads
     from k8s_workloads w cross join unnest(w.images) as i(image)
     where w.gone_at is null`,
  ),
);

/** The images present workloads run, the most used first, and how many are not pinned to a version. */
export async function imageStats(db: Knex) {
  const images = await imageCounts.rows(db);
  const totals = (await imageTotals.first(db))!;
  return { ...totals, images };
}

/** How many of the least available workloads the replica stats list. */
export const MOST_UNAVAILABLE_MAX = 20;

const replicaTotals = statement<{ workloads: number; desired: number; ready: number }>((q) =>
  q.raw(
    `select count(*)::int as workloads, coalesce(sum(w.replicas), 0)::bigint::float8 as desired,
       coalesce(sum(least(w.ready_replicas, w.replicas)), 0)::bigint::float8 as ready
     from k8s_workloads w where w.gone_at is null`,
  ),
);

const leastAvailable = statement<WorkloadRow>((q) =>
  q('k8s_workloads as w')
    .whereNull('w.gone_at')
    .whereRaw('w.ready_replicas < w.replicas')
    .orderByRaw('w.replicas - w.ready_replicas desc, w.id')
    .limit(MOST_UNAVAILABLE_MAX)
    .select(workloadColumns(q)),
);

/** Desired and ready replicas of the present workloads, and those missing the most replicas. */
export async function replicaStats(db: Knex) {
  const totals = (await replicaTotals.first(db))!;
  const mostUnavailable = (await leastAvailable.rows(db)).map(toWorkload);
  return {
    workloads: totals.workloads,
    desired_replicas: totals.desired,
    ready_replicas: totals.ready,
    availability: totals.desired === 0 ? 1 : totals.ready / totals.desired,
    most_unavailable: mostUnavailable,
  };
}
