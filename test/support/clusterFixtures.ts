import type { Knex } from 'knex';
import { issueAgentToken } from '../../core/auth/store';
import { withTenant } from '../../db/tenancy';

// Cluster data written straight to the database as the app role (under row-level security),
// as an agent's push would leave it: the operations views are tested on it without depending on
// the push route.

export interface WorkloadSeed {
  namespace?: string;
  kind?: string;
  name: string;
  replicas?: number;
  ready_replicas?: number;
  images?: string[];
  labels?: Record<string, string>;
  conditions?: { type: string; status: string; reason: string }[];
  entity_id?: string | null;
  /** How long ago it was first seen (default: now). */
  first_seen_days_ago?: number;
  /** How long ago a push last named it (default: now). */
  last_seen_days_ago?: number;
  gone?: boolean;
}

export interface FlowSeed {
  from: [namespace: string, name: string];
  to: [namespace: string, name: string];
  port: number;
  protocol?: string;
  count?: number;
}

export interface SeededCluster {
  clusterId: string;
  /** An agent token of the cluster. */
  token: string;
  /** Workload ids by name. */
  workloads: Record<string, string>;
}

const daysAgo = (q: Knex, days = 0) => q.raw(`now() - make_interval(days => ?)`, [days]);

/** Registers a cluster's agent with its workloads and flows in `tenantId`, and issues its agent token. */
export async function seedCluster(
  db: Knex,
  tenantId: string,
  clusterId: string,
  seed: { workloads?: WorkloadSeed[]; flows?: FlowSeed[]; nodeCount?: number } = {},
): Promise<SeededCluster> {
  return withTenant(db, tenantId, async (trx) => {
    await trx('k8s_agents').insert({
      tenant_id: tenantId,
      cluster_id: clusterId,
      display_name: clusterId,
      node_count: seed.nodeCount ?? 3,
      last_heartbeat: trx.fn.now(),
    });
    const workloads: Record<string, string> = {};
    for (const w of seed.workloads ?? []) {
      const [row] = await trx('k8s_workloads')
        .insert({
          tenant_id: tenantId,
          cluster_id: clusterId,
          namespace: w.namespace ?? 'default',
          kind: w.kind ?? 'Deployment',
          name: w.name,
          labels: JSON.stringify(w.labels ?? {}),
          replicas: w.replicas ?? 1,
          ready_replicas: w.ready_replicas ?? w.replicas ?? 1,
          images: w.images ?? [`registry.test/${w.name}:1.0.0`],
          conditions: JSON.stringify(w.conditions ?? []),
          entity_id: w.entity_id ?? null,
          first_seen_at: daysAgo(trx, w.first_seen_days_ago),
          last_seen_at: daysAgo(trx, w.last_seen_days_ago),
          gone_at: w.gone ? daysAgo(trx, w.last_seen_days_ago) : null,
        })
        .returning('id');
      workloads[w.name] = row.id as string;
    }
    for (const f of seed.flows ?? []) {
      await trx('k8s_network_flows').insert({
        tenant_id: tenantId,
        cluster_id: clusterId,
        source_namespace: f.from[0],
        source_name: f.from[1],
        destination_namespace: f.to[0],
        destination_name: f.to[1],
        port: f.port,
        protocol: f.protocol ?? 'TCP',
        count: f.count ?? 1,
      });
    }
    const token = await issueAgentToken(trx, tenantId, clusterId);
    return { clusterId, token, workloads };
  });
}

/** An entity of the tenant, owned by `owner` (a team slug), for workloads to belong to. */
export async function seedEntity(db: Knex, tenantId: string, serviceId: string, owner?: string): Promise<string> {
  return withTenant(db, tenantId, async (trx) => {
    const [row] = await trx('entities')
      .insert({ tenant_id: tenantId, service_id: serviceId, name: serviceId, type: 'service', owner: owner ?? null })
      .returning('id');
    return row.id as string;
  });
}

/** An image change of a workload, as the push records it. */
export async function seedDeployment(
  db: Knex,
  tenantId: string,
  clusterId: string,
  workloadId: string,
  entityId: string | null,
  images: { from: string[]; to: string[] },
): Promise<void> {
  await withTenant(db, tenantId, (trx) =>
    trx('k8s_deployments').insert({
      tenant_id: tenantId,
      cluster_id: clusterId,
      workload_id: workloadId,
      entity_id: entityId,
      previous_images: images.from,
      images: images.to,
    }),
  );
}
