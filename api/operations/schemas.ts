import { WORKLOAD_STATUSES } from '../../core/operations/types';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';
import { k8sName } from '../k8s/schemas';

// Schemas the operations views share, and those of the workload views (workloadRoutes.ts);
// clusterSchemas.ts and resourceSchemas.ts hold the others.

export const dateTime = { type: 'string', format: 'date-time' } as const;
export const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
export const stringArray = { type: 'array', items: { type: 'string' } } as const;
/** Counts by a value (a status, a kind, a cluster): the stats of the operations and GitOps views. */
export const countsSchema = { type: 'object', additionalProperties: { type: 'integer' } } as const;

export const statusProperty = {
  type: 'string',
  enum: WORKLOAD_STATUSES,
  description:
    'gone: no longer pushed; scaled_to_zero: 0 replicas wanted; unavailable: none ready; degraded: some ready; healthy: all ready',
} as const;

/** The `{id}` path parameter of a workload or a GitOps resource. */
export const uuidIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
} as const;

export const clusterParams = {
  type: 'object',
  required: ['clusterId'],
  properties: { clusterId: k8sName },
  additionalProperties: false,
} as const;

export const entityRefSchema = {
  type: ['object', 'null'],
  required: ['id', 'service_id', 'name', 'owner'],
  properties: {
    id: { type: 'string' },
    service_id: { type: 'string' },
    name: { type: 'string' },
    owner: { type: ['string', 'null'], description: 'A team slug or a user’s email' },
  },
  additionalProperties: false,
  description: 'The entity the workload belongs to; null: none',
} as const;

const workloadProperties = {
  id: { type: 'string', format: 'uuid' },
  cluster_id: { type: 'string' },
  namespace: { type: 'string' },
  kind: { type: 'string' },
  name: { type: 'string' },
  status: statusProperty,
  replicas: { type: 'integer' },
  ready_replicas: { type: 'integer' },
  images: stringArray,
  entity_id: { type: ['string', 'null'] },
  first_seen_at: dateTime,
  last_seen_at: dateTime,
  gone_at: nullableDateTime,
} as const;

export const workloadSchema = {
  type: 'object',
  required: Object.keys(workloadProperties) as (keyof typeof workloadProperties)[],
  properties: workloadProperties,
  additionalProperties: false,
} as const;

const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'reason'],
  properties: { type: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' } },
  additionalProperties: false,
} as const;

export const workloadDetailSchema = {
  type: 'object',
  required: [...workloadSchema.required, 'labels', 'annotations', 'conditions', 'entity'],
  properties: {
    ...workloadProperties,
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    conditions: { type: 'array', items: conditionSchema },
    entity: entityRefSchema,
  },
  additionalProperties: false,
} as const;

export const workloadListQuery = {
  type: 'object',
  properties: {
    ...keysetListQuery(50, 200),
    cluster: k8sName,
    namespace: k8sName,
    kind: k8sName,
    search: { ...k8sName, description: 'A prefix of the name' },
    include_gone: { type: 'boolean', default: false, description: 'Also list workloads no longer pushed' },
  },
  additionalProperties: false,
} as const;

export const workloadPageSchema = keysetPageSchema('workloads', workloadSchema);

export const workloadStatsSchema = {
  type: 'object',
  required: ['total', 'by_status', 'by_kind', 'by_cluster', 'by_namespace', 'gone', 'unowned'],
  properties: {
    total: { type: 'integer', description: 'Present workloads (not gone)' },
    by_status: countsSchema,
    by_kind: countsSchema,
    by_cluster: countsSchema,
    by_namespace: countsSchema,
    gone: { type: 'integer' },
    unowned: { type: 'integer', description: 'Present workloads that belong to no entity' },
  },
  additionalProperties: false,
} as const;

export const imageStatsSchema = {
  type: 'object',
  required: ['images', 'distinct_images', 'unpinned_images', 'unpinned_workloads'],
  properties: {
    images: {
      type: 'array',
      description: 'The images the most present workloads run (at most 100)',
      items: {
        type: 'object',
        required: ['image', 'workloads', 'clusters', 'unpinned'],
        properties: {
          image: { type: 'string' },
          workloads: { type: 'integer' },
          clusters: { type: 'integer' },
          unpinned: { type: 'boolean', description: 'No tag, or `latest`, and no digest' },
        },
        additionalProperties: false,
      },
    },
    distinct_images: { type: 'integer', description: 'Distinct images present workloads run' },
    unpinned_images: { type: 'integer', description: 'Distinct unpinned images present workloads run' },
    unpinned_workloads: { type: 'integer', description: 'Present workloads running an unpinned image' },
  },
  additionalProperties: false,
} as const;

export const replicaStatsSchema = {
  type: 'object',
  required: ['workloads', 'desired_replicas', 'ready_replicas', 'availability', 'most_unavailable'],
  properties: {
    workloads: { type: 'integer' },
    desired_replicas: { type: 'number' },
    ready_replicas: { type: 'number', description: 'Ready replicas, at most the desired count per workload' },
    availability: { type: 'number', description: 'ready / desired (1 when nothing is desired)' },
    most_unavailable: {
      type: 'array',
      items: workloadSchema,
      description: 'The present workloads missing the most ready replicas (at most 20)',
    },
  },
  additionalProperties: false,
} as const;

const policyCounts = {
  workloads: { type: 'integer', description: 'Present workloads' },
  with_ingress: { type: 'integer', description: 'Present workloads some flow reaches' },
  with_egress: { type: 'integer', description: 'Present workloads some flow leaves' },
  without_flows: { type: 'integer', description: 'Present workloads no flow touches' },
  flows: { type: 'integer' },
  cross_namespace_flows: { type: 'integer', description: 'Flows between two namespaces' },
} as const;

const policyCountsSchema = {
  type: 'object',
  required: Object.keys(policyCounts) as (keyof typeof policyCounts)[],
  properties: policyCounts,
  additionalProperties: false,
} as const;

export const networkPolicyStatsSchema = {
  type: 'object',
  required: [...policyCountsSchema.required, 'by_cluster'],
  properties: { ...policyCounts, by_cluster: { type: 'object', additionalProperties: policyCountsSchema } },
  additionalProperties: false,
} as const;

export const podsSchema = {
  type: 'object',
  required: ['pods', 'replicas', 'ready_replicas', 'truncated'],
  properties: {
    pods: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'ready', 'phase', 'images'],
        properties: {
          name: { type: 'string' },
          ready: { type: 'boolean' },
          phase: { type: 'string', enum: ['Running', 'NotReady'] },
          images: stringArray,
        },
        additionalProperties: false,
      },
    },
    replicas: { type: 'integer' },
    ready_replicas: { type: 'integer' },
    truncated: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

export const eventsSchema = {
  type: 'object',
  required: ['events'],
  properties: {
    events: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'reason', 'message', 'at'],
        properties: {
          type: { type: 'string', enum: ['FirstSeen', 'Condition', 'Deployed', 'Gone'] },
          reason: { type: 'string' },
          message: { type: 'string' },
          at: dateTime,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
