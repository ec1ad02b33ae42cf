import { notFound } from '../../core/errors';
import { workloadDeployments } from '../../core/operations/entityWorkloadStore';
import { derivedPods, workloadEvents } from '../../core/operations/rules';
import {
  getWorkload,
  imageStats,
  listWorkloads,
  replicaStats,
  workloadStats,
} from '../../core/operations/workloadStore';
import { networkPolicyStats } from '../../core/operations/clusterStore';
import type { Knex } from 'knex';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import {
  eventsSchema,
  imageStatsSchema,
  networkPolicyStatsSchema,
  podsSchema,
  replicaStatsSchema,
  workloadDetailSchema,
  workloadListQuery,
  workloadPageSchema,
  workloadStatsSchema,
  uuidIdParams as params,
} from './schemas';

// The workloads the agents pushed: the list, the tenant's stats, and one workload with the pods
// and events derived from what was pushed (docs/operations-views.md).

const PODS_MAX = 500;
const EVENT_DEPLOYMENTS_MAX = 50;

async function requireWorkload(db: Knex, id: string) {
  const workload = await getWorkload(db, id);
  if (!workload) throw notFound('Workload');
  return workload;
}

export const workloadRoutes = [
  defineRoute({
    method: 'GET',
    path: '/operations/workloads',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'Workloads the agents report, by name, filtered; gone ones only with `include_gone`',
    query: workloadListQuery,
    responses: { 200: { description: '`{workloads, next_cursor}`', schema: workloadPageSchema } },
    handler: async ({ db, query }) => {
      const { limit, cursor, ...filter } = query;
      const window = shapeDWindow({ limit, cursor });
      const page = shapeDPage(await listWorkloads(db, filter, window), window);
      return { workloads: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/stats',
    tag: 'Operations',
    access: 'operations:read',
    summary:
      'Present workloads by status, kind, cluster and namespace (the 100 most frequent values of each), and how many are gone or belong to no entity',
    responses: { 200: { description: 'The counts', schema: workloadStatsSchema } },
    handler: ({ db }) => workloadStats(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/image-stats',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'The images present workloads run, the most used first, and those not pinned to a version',
    responses: { 200: { description: 'The image counts', schema: imageStatsSchema } },
    handler: ({ db }) => imageStats(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/replica-stats',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'Desired and ready replicas of the present workloads, and those missing the most',
    responses: { 200: { description: 'The replica counts', schema: replicaStatsSchema } },
    handler: ({ db }) => replicaStats(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/network-policy-stats',
    tag: 'Operations',
    access: 'operations:read',
    summary:
      'The network-policy signal from the observed flows: present workloads with ingress, with egress or with no flow, and flows across namespaces, per cluster',
    responses: { 200: { description: 'The counts', schema: networkPolicyStatsSchema } },
    handler: ({ db }) => networkPolicyStats(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/{id}',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'A workload as last pushed: labels, annotations, conditions and the entity it belongs to',
    params,
    responses: { 200: { description: 'The workload', schema: workloadDetailSchema } },
    handler: ({ db, params }) => requireWorkload(db, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/{id}/pods',
    tag: 'Operations',
    access: 'operations:read',
    summary: `The workload’s pods as its replica counts describe them (the agent pushes no pods; at most ${PODS_MAX})`,
    params,
    responses: { 200: { description: '`{pods, replicas, ready_replicas, truncated}`', schema: podsSchema } },
    handler: async ({ db, params: { id } }) => {
      const workload = await requireWorkload(db, id);
      // A gone workload runs nothing.
      const running = workload.gone_at === null ? workload : { ...workload, replicas: 0, ready_replicas: 0 };
      return {
        ...derivedPods(running, PODS_MAX),
        replicas: running.replicas,
        ready_replicas: running.ready_replicas,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/workloads/{id}/events',
    tag: 'Operations',
    access: 'operations:read',
    summary: `The workload’s events, newest first: first seen, image changes (the last ${EVENT_DEPLOYMENTS_MAX}), its pushed conditions, gone`,
    params,
    responses: { 200: { description: '`{events}`', schema: eventsSchema } },
    handler: async ({ db, params: { id } }) => {
      const workload = await requireWorkload(db, id);
      return { events: workloadEvents(workload, await workloadDeployments(db, id, EVENT_DEPLOYMENTS_MAX)) };
    },
  }),
];
