import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import { STATUS_SQL } from './signals';
import type { WorkloadStatus } from './types';

// One cluster as the operations views read it: its network flows, the topology they draw
// between its workloads, its stats; and the tenant's network-policy signal from the flows.

interface AgentRow {
  cluster_id: string;
  display_name: string;
  environment: string | null;
  region: string | null;
  agent_version: string | null;
  node_count: number;
  last_heartbeat: Date | null;
}

const agentOfCluster = statement<AgentRow, { clusterId: string }>((q, { clusterId }) =>
  q('k8s_agents')
    .where('cluster_id', clusterId)
    .first('cluster_id', 'display_name', 'environment', 'region', 'agent_version', 'node_count', 'last_heartbeat'),
);

/** Whether the tenant has an agent registered for the cluster. */
export async function clusterExists(db: Knex, clusterId: string): Promise<boolean> {
  return (await agentOfCluster.first(db, { clusterId })) !== undefined;
}

interface FlowRow {
  id: string;
  source_namespace: string;
  source_name: string;
  destination_namespace: string;
  destination_name: string;
  port: number;
  protocol: string;
  count: string;
  first_seen_at: Date;
  last_seen_at: Date;
}

const toFlow = (row: FlowRow) => ({
  id: row.id,
  source: { namespace: row.source_namespace, name: row.source_name },
  destination: { namespace: row.destination_namespace, name: row.destination_name },
  port: row.port,
  protocol: row.protocol,
  count: Number(row.count),
  first_seen_at: toIso(row.first_seen_at),
  last_seen_at: toIso(row.last_seen_at),
});

export type NetworkFlow = ReturnType<typeof toFlow>;

const FLOW_COLUMNS = [
  'f.id',
  'f.source_namespace',
  'f.source_name',
  'f.destination_namespace',
  'f.destination_name',
  'f.port',
  'f.protocol',
  'f.count',
  'f.first_seen_at',
  'f.last_seen_at',
];

const ID_ORDER: KeysetOrder = { columns: [{ column: 'f.id', kind: 'uuid' }], direction: 'asc' };

const flowPage = keysetStatement({
  order: ID_ORDER,
  build: (q, { clusterId }: Placeholders<{ clusterId: string }>) =>
    q('k8s_network_flows as f').where('f.cluster_id', clusterId).select(FLOW_COLUMNS),
  toItem: toFlow,
});

/** A page of the cluster's flows in id order (k8s_network_flows_by_id). */
export function listFlows(db: Knex, clusterId: string, window: KeysetWindow): Promise<KeysetRow<NetworkFlow>[]> {
  return flowPage(db, window, { clusterId });
}

interface NodeRow {
  id: string | null;
  namespace: string;
  name: string;
  kind: string | null;
  status: WorkloadStatus | null;
}

// The cluster's present workloads, and the flow endpoints that are none of them (traffic to or
// from something the agent does not report as a workload), by name. Each endpoint is looked up
// in k8s_workloads_by_cluster_name, not in the first part's rows (which have no index).
const topologyNodes = statement<NodeRow, { clusterId: string; limit: number }>((q, { clusterId, limit }) =>
  q.raw(
    `with endpoints as (
       select f.tenant_id, f.source_namespace as namespace, f.source_name as name
         from k8s_network_flows f where f.cluster_id = ?
       union
       select f.tenant_id, f.destination_namespace, f.destination_name from k8s_network_flows f where f.cluster_id = ?
     )
     select * from (
       select w.id, w.namespace, w.name, w.kind, ${STATUS_SQL} as status
         from k8s_workloads w where w.cluster_id = ? and w.gone_at is null
       union all
       select null, e.namespace, e.name, null, null from endpoints e
         where not exists (select 1 from k8s_workloads w where w.tenant_id = e.tenant_id and w.cluster_id = ?
           and w.namespace = e.namespace and w.name = e.name and w.gone_at is null)
     ) nodes order by namespace, name, kind nulls last limit ?`,
    [clusterId, clusterId, clusterId, clusterId, limit],
  ),
);

const topologyEdges = statement<FlowRow, { clusterId: string; limit: number }>((q, { clusterId, limit }) =>
  q('k8s_network_flows as f')
    .where('f.cluster_id', clusterId)
    .orderBy([
      { column: 'f.count', order: 'desc' },
      { column: 'f.id', order: 'asc' },
    ])
    .limit(limit)
    .select(FLOW_COLUMNS),
);

const nodeKey = (namespace: string, name: string) => `${namespace}/${name}`;

/**
 * The cluster's traffic graph: nodes are its present workloads and the other endpoints its flows
 * name (`external`), keyed `namespace/name`; edges its flows, the busiest first. Each is
 * bounded; `truncated` says a bound was reached.
 */
export async function clusterTopology(db: Knex, clusterId: string, limits: { nodes: number; edges: number }) {
  const nodeRows = await topologyNodes.rows(db, { clusterId, limit: limits.nodes + 1 });
  const edgeRows = await topologyEdges.rows(db, { clusterId, limit: limits.edges + 1 });
  // A workload and a flow endpoint of the same name are one node: the workload.
  const nodes = new Map<string, ReturnType<typeof toNode>>();
  const toNode = (row: NodeRow) => ({
    id: nodeKey(row.namespace, row.name),
    workload_id: row.id,
    namespace: row.namespace,
    name: row.name,
    kind: row.kind,
    status: row.status,
    external: row.id === null,
  });
  for (const row of nodeRows.slice(0, limits.nodes)) {
    const key = nodeKey(row.namespace, row.name);
    if (!nodes.has(key) || row.id !== null) nodes.set(key, toNode(row));
  }
  const edges = edgeRows.slice(0, limits.edges).map((row) => {
    const flow = toFlow(row);
    return {
      id: flow.id,
      source: nodeKey(flow.source.namespace, flow.source.name),
      target: nodeKey(flow.destination.namespace, flow.destination.name),
      port: flow.port,
      protocol: flow.protocol,
      count: flow.count,
    };
  });
  return {
    nodes: [...nodes.values()],
    edges,
    truncated: nodeRows.length > limits.nodes || edgeRows.length > limits.edges,
  };
}

const clusterCounts = statement<
  {
    workloads: number;
    gone: number;
    namespaces: number;
    healthy: number;
    degraded: number;
    unavailable: number;
    scaled_to_zero: number;
    flows: number;
    traffic: number;
    gitops_resources: number;
  },
  { clusterId: string }
>((q, { clusterId }) =>
  q.raw(
    `select w.*, f.*, g.* from
       (select (count(*) filter (where gone_at is null))::int as workloads,
          (count(*) filter (where gone_at is not null))::int as gone,
          (count(distinct namespace) filter (where gone_at is null))::int as namespaces,
          ${['healthy', 'degraded', 'unavailable', 'scaled_to_zero']
            .map((status) => `(count(*) filter (where ${STATUS_SQL} = '${status}'))::int as ${status}`)
            .join(', ')}
        from k8s_workloads w where w.cluster_id = ?) w,
       (select count(*)::int as flows, coalesce(sum(count), 0)::float8 as traffic
        from k8s_network_flows where cluster_id = ?) f,
       (select count(*)::int as gitops_resources from gitops_resources where cluster_id = ? and gone_at is null) g`,
    [clusterId, clusterId, clusterId],
  ),
);

/** The cluster's agent and counts of what it reported; undefined when the tenant has no such cluster. */
export async function clusterStats(db: Knex, clusterId: string) {
  const agent = await agentOfCluster.first(db, { clusterId });
  if (!agent) return undefined;
  const counts = (await clusterCounts.first(db, { clusterId }))!;
  return {
    cluster_id: agent.cluster_id,
    agent: {
      display_name: agent.display_name,
      environment: agent.environment,
      region: agent.region,
      agent_version: agent.agent_version,
      node_count: agent.node_count,
      last_heartbeat: toIsoOrNull(agent.last_heartbeat),
    },
    workloads: {
      present: counts.workloads,
      gone: counts.gone,
      namespaces: counts.namespaces,
      by_status: {
        healthy: counts.healthy,
        degraded: counts.degraded,
        unavailable: counts.unavailable,
        scaled_to_zero: counts.scaled_to_zero,
      },
    },
    network: { flows: counts.flows, traffic: counts.traffic },
    gitops_resources: counts.gitops_resources,
  };
}

// Per cluster: its present workloads, those a flow reaches (ingress) and those a flow leaves
// (egress), and its flows, those between namespaces among them. Each workload is looked up once
// per direction in a flow index (two probes per workload, whatever the data's statistics say);
// materialized, so the counts below do not repeat the probes.
const policySignals = statement<{
  cluster_id: string;
  workloads: number;
  with_ingress: number;
  with_egress: number;
  without_flows: number;
  flows: number;
  cross_namespace_flows: number;
}>((q) =>
  q.raw(
    `with marked as materialized (
       select w.cluster_id,
         exists (select 1 from k8s_network_flows f where f.tenant_id = w.tenant_id and f.cluster_id = w.cluster_id
           and f.destination_namespace = w.namespace and f.destination_name = w.name) as ingress,
         exists (select 1 from k8s_network_flows f where f.tenant_id = w.tenant_id and f.cluster_id = w.cluster_id
           and f.source_namespace = w.namespace and f.source_name = w.name) as egress
       from k8s_workloads w where w.gone_at is null
     ), by_workload as (
       select cluster_id, count(*)::int as workloads, (count(*) filter (where ingress))::int as with_ingress,
         (count(*) filter (where egress))::int as with_egress,
         (count(*) filter (where not ingress and not egress))::int as without_flows
       from marked group by cluster_id
     ), by_flow as (
       select cluster_id, count(*)::int as flows,
         (count(*) filter (where source_namespace <> destination_namespace))::int as cross_namespace_flows
       from k8s_network_flows group by cluster_id
     )
     select coalesce(w.cluster_id, f.cluster_id) as cluster_id, coalesce(w.workloads, 0) as workloads,
       coalesce(w.with_ingress, 0) as with_ingress, coalesce(w.with_egress, 0) as with_egress,
       coalesce(w.without_flows, 0) as without_flows, coalesce(f.flows, 0) as flows,
       coalesce(f.cross_namespace_flows, 0) as cross_namespace_flows
     from by_workload w full join by_flow f on f.cluster_id = w.cluster_id
     order by 1`,
  ),
);

const POLICY_FIELDS = [
  'workloads',
  'with_ingress',
  'with_egress',
  'without_flows',
  'flows',
  'cross_namespace_flows',
] as const;

/** The network-policy signal of docs/operations-views.md, for the tenant and per cluster. */
export async function networkPolicyStats(db: Knex) {
  const rows = await policySignals.rows(db);
  const totals = Object.fromEntries(
    POLICY_FIELDS.map((field) => [field, rows.reduce((sum, row) => sum + row[field], 0)]),
  ) as Record<(typeof POLICY_FIELDS)[number], number>;
  return {
    ...totals,
    by_cluster: Object.fromEntries(
      rows.map(({ cluster_id, ...row }) => [cluster_id, row as Record<(typeof POLICY_FIELDS)[number], number>]),
    ),
  };
}
