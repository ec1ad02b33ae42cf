import type { Knex } from 'knex';
import { notFound } from '../../core/errors';
import { clusterExists, clusterStats, clusterTopology, listFlows } from '../../core/operations/clusterStore';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { clusterStatsSchema, flowListQuery, flowPageSchema, topologySchema } from './clusterSchemas';
import { clusterParams } from './schemas';

// One cluster's operations views: its network flows (from the deprecated network-flow push),
// the topology they draw, and its stats. A cluster the tenant has no agent for is a 404.

const TOPOLOGY_MAX_NODES = 1000;
const TOPOLOGY_MAX_EDGES = 5000;

async function requireCluster(db: Knex, clusterId: string): Promise<void> {
  if (!(await clusterExists(db, clusterId))) throw notFound('Cluster');
}

export const clusterRoutes = [
  defineRoute({
    method: 'GET',
    path: '/operations/clusters/{clusterId}/network-flows',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'The cluster’s observed network flows (one per source, destination, port and protocol, with a count)',
    params: clusterParams,
    query: flowListQuery,
    responses: { 200: { description: '`{flows, next_cursor}`', schema: flowPageSchema } },
    handler: async ({ db, params, query }) => {
      await requireCluster(db, params.clusterId);
      const window = shapeDWindow(query);
      const page = shapeDPage(await listFlows(db, params.clusterId, window), window);
      return { flows: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/clusters/{clusterId}/topology',
    tag: 'Operations',
    access: 'operations:read',
    summary: `The cluster’s traffic graph: its present workloads and other flow endpoints as nodes (at most ${TOPOLOGY_MAX_NODES}), its flows as edges, busiest first (at most ${TOPOLOGY_MAX_EDGES})`,
    params: clusterParams,
    responses: { 200: { description: '`{cluster_id, nodes, edges, truncated}`', schema: topologySchema } },
    handler: async ({ db, params }) => {
      await requireCluster(db, params.clusterId);
      const graph = await clusterTopology(db, params.clusterId, {
        nodes: TOPOLOGY_MAX_NODES,
        edges: TOPOLOGY_MAX_EDGES,
      });
      return { cluster_id: params.clusterId, ...graph };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/clusters/{clusterId}/stats',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'The cluster’s agent and counts of its workloads, flows and GitOps resources',
    params: clusterParams,
    responses: { 200: { description: 'The cluster’s stats', schema: clusterStatsSchema } },
    handler: async ({ db, params }) => {
      const stats = await clusterStats(db, params.clusterId);
      if (!stats) throw notFound('Cluster');
      return stats;
    },
  }),
];
