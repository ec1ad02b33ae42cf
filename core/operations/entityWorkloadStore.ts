import type { Knex } from 'knex';
import { statement } from '../../db/statements';
import { toIso } from '../timestamps';

// What the agents reported about one entity: its workloads as instances (the spec's
// WorkloadInstance) and its deployments (image changes between pushes); and a workload's own
// deployments, for its events.

interface InstanceRow {
  cluster_id: string;
  namespace: string;
  name: string;
  kind: string;
  replicas: number;
  ready_replicas: number;
  images: string[];
  last_seen_at: Date;
}

const instancesOf = statement<InstanceRow, { entityId: string; limit: number }>((q, { entityId, limit }) =>
  q('k8s_workloads as w')
    .where('w.entity_id', entityId)
    .whereNull('w.gone_at')
    .orderBy(['w.cluster_id', 'w.namespace', 'w.name', 'w.kind'])
    .limit(limit)
    .select(
      'w.cluster_id',
      'w.namespace',
      'w.name',
      'w.kind',
      'w.replicas',
      'w.ready_replicas',
      'w.images',
      'w.last_seen_at',
    ),
);

/** The entity's present workloads (k8s_workloads_by_entity), at most `limit`. */
export async function entityInstances(db: Knex, entityId: string, limit: number) {
  return (await instancesOf.rows(db, { entityId, limit })).map((row) => ({
    cluster_id: row.cluster_id,
    namespace: row.namespace,
    name: row.name,
    kind: row.kind,
    replicas: row.replicas,
    ready_replicas: row.ready_replicas,
    // The spec's instance has one image: the workload's first container's.
    image: row.images[0] ?? '',
    images: row.images,
    last_seen: toIso(row.last_seen_at),
  }));
}

interface DeploymentRow {
  id: string;
  cluster_id: string;
  workload_id: string;
  namespace: string;
  kind: string;
  name: string;
  previous_images: string[];
  images: string[];
  deployed_at: Date;
}

const DEPLOYMENT_COLUMNS = [
  'd.id',
  'd.cluster_id',
  'd.workload_id',
  'w.namespace',
  'w.kind',
  'w.name',
  'd.previous_images',
  'd.images',
  'd.deployed_at',
];

const toDeployment = (row: DeploymentRow) => ({
  id: row.id,
  cluster_id: row.cluster_id,
  workload: { id: row.workload_id, namespace: row.namespace, kind: row.kind, name: row.name },
  previous_images: row.previous_images,
  images: row.images,
  deployed_at: toIso(row.deployed_at),
});

export type Deployment = ReturnType<typeof toDeployment>;

const deploymentsOfEntity = statement<DeploymentRow, { entityId: string; limit: number }>((q, { entityId, limit }) =>
  q('k8s_deployments as d')
    .join('k8s_workloads as w', 'w.id', 'd.workload_id')
    .where('d.entity_id', entityId)
    .orderBy([
      { column: 'd.deployed_at', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(limit)
    .select(DEPLOYMENT_COLUMNS),
);

/** The entity's deployments, newest first (k8s_deployments_by_entity). */
export async function entityDeployments(db: Knex, entityId: string, limit: number): Promise<Deployment[]> {
  return (await deploymentsOfEntity.rows(db, { entityId, limit })).map(toDeployment);
}

const deploymentsOfWorkload = statement<DeploymentRow, { workloadId: string; limit: number }>(
  (q, { workloadId, limit }) =>
    q('k8s_deployments as d')
      .join('k8s_workloads as w', 'w.id', 'd.workload_id')
      .where('d.workload_id', workloadId)
      .orderBy([
        { column: 'd.deployed_at', order: 'desc' },
        { column: 'd.id', order: 'desc' },
      ])
      .limit(limit)
      .select(DEPLOYMENT_COLUMNS),
);

/** The workload's deployments, newest first (k8s_deployments_by_workload). */
export async function workloadDeployments(db: Knex, workloadId: string, limit: number): Promise<Deployment[]> {
  return (await deploymentsOfWorkload.rows(db, { workloadId, limit })).map(toDeployment);
}
