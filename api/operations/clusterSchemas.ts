import { WORKLOAD_STATUSES } from '../../core/operations/types';
import { countsSchema, dateTime, nullableDateTime, statusProperty } from './schemas';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';

// Schemas of a cluster's network flows, topology and stats (clusterRoutes.ts).

const endpointSchema = {
  type: 'object',
  required: ['namespace', 'name'],
  properties: { namespace: { type: 'string' }, name: { type: 'string' } },
  additionalProperties: false,
} as const;

export const flowSchema = {
  type: 'object',
  required: ['id', 'source', 'destination', 'port', 'protocol', 'count', 'first_seen_at', 'last_seen_at'],
  properties: {
    id: { type: 'string' },
    source: endpointSchema,
    destination: endpointSchema,
    port: { type: 'integer' },
    protocol: { type: 'string' },
    count: { type: 'integer' },
    first_seen_at: dateTime,
    last_seen_at: dateTime,
  },
  additionalProperties: false,
} as const;

export const flowListQuery = {
  type: 'object',
  properties: keysetListQuery(100, 500),
  additionalProperties: false,
} as const;

export const flowPageSchema = keysetPageSchema('flows', flowSchema);

export const topologySchema = {
  type: 'object',
  required: ['cluster_id', 'nodes', 'edges', 'truncated'],
  properties: {
    cluster_id: { type: 'string' },
    nodes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'workload_id', 'namespace', 'name', 'kind', 'status', 'external'],
        properties: {
          id: { type: 'string', description: '`namespace/name`' },
          workload_id: { type: ['string', 'null'] },
          namespace: { type: 'string' },
          name: { type: 'string' },
          kind: { type: ['string', 'null'] },
          status: { ...statusProperty, type: ['string', 'null'], enum: [...WORKLOAD_STATUSES, null] },
          external: { type: 'boolean', description: 'A flow endpoint the agent reports no workload for' },
        },
        additionalProperties: false,
      },
    },
    edges: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'source', 'target', 'port', 'protocol', 'count'],
        properties: {
          id: { type: 'string' },
          source: { type: 'string' },
          target: { type: 'string' },
          port: { type: 'integer' },
          protocol: { type: 'string' },
          count: { type: 'integer' },
        },
        additionalProperties: false,
      },
    },
    truncated: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

export const clusterStatsSchema = {
  type: 'object',
  required: ['cluster_id', 'agent', 'workloads', 'network', 'gitops_resources'],
  properties: {
    cluster_id: { type: 'string' },
    agent: {
      type: 'object',
      required: ['display_name', 'environment', 'region', 'agent_version', 'node_count', 'last_heartbeat'],
      properties: {
        display_name: { type: 'string' },
        environment: { type: ['string', 'null'] },
        region: { type: ['string', 'null'] },
        agent_version: { type: ['string', 'null'] },
        node_count: { type: 'integer' },
        last_heartbeat: nullableDateTime,
      },
      additionalProperties: false,
    },
    workloads: {
      type: 'object',
      required: ['present', 'gone', 'namespaces', 'by_status'],
      properties: {
        present: { type: 'integer' },
        gone: { type: 'integer' },
        namespaces: { type: 'integer' },
        by_status: countsSchema,
      },
      additionalProperties: false,
    },
    network: {
      type: 'object',
      required: ['flows', 'traffic'],
      properties: {
        flows: { type: 'integer' },
        traffic: { type: 'number', description: 'The sum of the flows’ counts' },
      },
      additionalProperties: false,
    },
    gitops_resources: { type: 'integer', description: 'Present GitOps resources' },
  },
  additionalProperties: false,
} as const;
