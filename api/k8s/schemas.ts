import { AGENT_STATUSES } from '../../core/k8s/types';

/** A cluster id: what Kubernetes allows in a name, safe in a path. */
const clusterId = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$' } as const;
const shortText = { type: 'string', minLength: 1, maxLength: 200 } as const;
/** Kubernetes names: namespaces and kinds up to 63 characters, object names up to 253. */
export const k8sName = { type: 'string', minLength: 1, maxLength: 253 } as const;
const k8sShortName = { type: 'string', minLength: 1, maxLength: 63 } as const;
const stringMap = (maxValueLength: number) =>
  ({
    type: 'object',
    maxProperties: 64,
    propertyNames: { maxLength: 317 },
    additionalProperties: { type: 'string', maxLength: maxValueLength },
  }) as const;
const count = { type: 'integer', minimum: 0, maximum: 1_000_000 } as const;

export const clusterParams = {
  type: 'object',
  required: ['cluster_id'],
  properties: { cluster_id: clusterId },
  additionalProperties: false,
} as const;

export const registerSchema = {
  type: 'object',
  required: ['cluster_id', 'display_name'],
  properties: { cluster_id: clusterId, display_name: shortText, environment: shortText, region: shortText },
  additionalProperties: false,
} as const;

export const agentSchema = {
  type: 'object',
  required: [
    'cluster_id',
    'display_name',
    'environment',
    'region',
    'status',
    'last_heartbeat',
    'agent_version',
    'node_count',
    'workload_count',
    'created_at',
  ],
  properties: {
    cluster_id: { type: 'string' },
    display_name: { type: 'string' },
    environment: { type: ['string', 'null'] },
    region: { type: ['string', 'null'] },
    status: { type: 'string', enum: AGENT_STATUSES },
    last_heartbeat: { type: ['string', 'null'], format: 'date-time' },
    agent_version: { type: ['string', 'null'] },
    node_count: { type: 'integer' },
    workload_count: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const agentListSchema = {
  type: 'object',
  required: ['agents'],
  properties: { agents: { type: 'array', items: agentSchema } },
  additionalProperties: false,
} as const;

export const agentTokenSchema = {
  type: 'object',
  required: ['cluster_id', 'token'],
  properties: {
    cluster_id: { type: 'string' },
    token: { type: 'string', description: 'The agent token (shp_agt_…), shown once' },
  },
  additionalProperties: false,
} as const;

export const parkedSchema = {
  type: 'object',
  required: ['cluster_id', 'status', 'attempts'],
  properties: {
    cluster_id: { type: 'string' },
    status: { type: 'string', enum: ['pending'] },
    attempts: { type: 'integer', minimum: 1 },
  },
  additionalProperties: false,
} as const;

export const revokedSchema = {
  type: 'object',
  required: ['cluster_id', 'revoked'],
  properties: { cluster_id: { type: 'string' }, revoked: { type: 'boolean', enum: [true] } },
  additionalProperties: false,
} as const;

export const heartbeatSchema = {
  type: 'object',
  required: ['agent_version', 'node_count'],
  properties: { agent_version: { type: 'string', minLength: 1, maxLength: 64 }, node_count: count },
  additionalProperties: false,
} as const;

export const heartbeatReplySchema = {
  type: 'object',
  required: ['cluster_id', 'status', 'last_heartbeat'],
  properties: {
    cluster_id: { type: 'string' },
    status: { type: 'string', enum: AGENT_STATUSES },
    last_heartbeat: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

const workloadSchema = {
  type: 'object',
  required: ['name', 'namespace', 'kind'],
  properties: {
    name: k8sName,
    namespace: k8sShortName,
    kind: k8sShortName,
    labels: stringMap(63),
    annotations: stringMap(4096),
    replicas: count,
    ready_replicas: count,
    images: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 512 } },
    conditions: {
      type: 'array',
      maxItems: 32,
      items: {
        type: 'object',
        required: ['type', 'status'],
        properties: {
          type: { type: 'string', maxLength: 128 },
          status: { type: 'string', maxLength: 128 },
          reason: { type: 'string', maxLength: 256 },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const pushSchema = {
  type: 'object',
  required: ['cluster_id', 'workloads'],
  properties: {
    cluster_id: clusterId,
    // Bounded by SHIPYARD_AGENT_PUSH_MAX_WORKLOADS (a 413 names it).
    workloads: { type: 'array', items: workloadSchema },
  },
  additionalProperties: false,
} as const;

export const pushReplySchema = {
  type: 'object',
  required: ['received', 'created', 'updated', 'gone', 'deployments'],
  properties: {
    received: { type: 'integer', description: 'Workloads in the push' },
    created: { type: 'integer', description: 'Workloads seen for the first time' },
    updated: { type: 'integer', description: 'Known workloads that changed, or returned after being gone' },
    gone: { type: 'integer', description: 'Workloads of the cluster the push left out, now marked gone' },
    deployments: { type: 'integer', description: 'Image changes recorded as deployments' },
  },
  additionalProperties: false,
} as const;

export const flowPushSchema = {
  type: 'object',
  required: ['cluster_id', 'flows'],
  properties: {
    cluster_id: clusterId,
    // Bounded by SHIPYARD_AGENT_PUSH_MAX_FLOWS (a 413 names it).
    flows: {
      type: 'array',
      items: {
        type: 'object',
        required: [
          'source_namespace',
          'source_name',
          'destination_namespace',
          'destination_name',
          'port',
          'protocol',
          'count',
        ],
        properties: {
          source_namespace: k8sShortName,
          source_name: k8sName,
          destination_namespace: k8sShortName,
          destination_name: k8sName,
          port: { type: 'integer', minimum: 0, maximum: 65_535 },
          protocol: { type: 'string', minLength: 1, maxLength: 16 },
          count: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const flowReplySchema = {
  type: 'object',
  required: ['received', 'flows'],
  properties: {
    received: { type: 'integer', description: 'Flows in the push' },
    flows: { type: 'integer', description: 'Distinct flows (pair, port, protocol) written' },
  },
  additionalProperties: false,
} as const;
