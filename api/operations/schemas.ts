import { WORKLOAD_STATUSES, ZOMBIE_SIGNALS } from '../../core/operations/types';
import { keysetListQuery, keysetPageSchema, SHAPE_D_QUERY } from '../http/pagination';
import { k8sName } from '../k8s/schemas';

// Request and response schemas of the operations views (api/operations/*Routes.ts).

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const stringArray = { type: 'array', items: { type: 'string' } } as const;
/** Counts by a value (a status, a kind, a cluster): the stats of the operations and GitOps views. */
export const countsSchema = { type: 'object', additionalProperties: { type: 'integer' } } as const;

const statusProperty = {
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

const entityRefSchema = {
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

export const resourceSchema = {
  type: 'object',
  required: [
    'id',
    'cluster_id',
    'namespace',
    'kind',
    'name',
    'status',
    'signals',
    'replicas',
    'ready_replicas',
    'images',
    'entity',
    'gitops',
    'first_seen_at',
    'last_seen_at',
    'gone_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The workload’s id' },
    cluster_id: { type: 'string' },
    namespace: { type: 'string' },
    kind: { type: 'string' },
    name: { type: 'string' },
    status: statusProperty,
    signals: { type: 'array', items: { type: 'string', enum: ZOMBIE_SIGNALS }, description: 'Its zombie signals' },
    replicas: { type: 'integer' },
    ready_replicas: { type: 'integer' },
    images: stringArray,
    entity: entityRefSchema,
    gitops: {
      type: ['object', 'null'],
      required: ['id', 'tool', 'sync_status', 'health_status', 'revision'],
      properties: {
        id: { type: 'string' },
        tool: { type: ['string', 'null'] },
        sync_status: { type: ['string', 'null'] },
        health_status: { type: ['string', 'null'] },
        revision: { type: ['string', 'null'] },
      },
      additionalProperties: false,
      description: 'The present GitOps resource of the same cluster, namespace, kind and name; null: none',
    },
    first_seen_at: dateTime,
    last_seen_at: dateTime,
    gone_at: nullableDateTime,
  },
  additionalProperties: false,
} as const;

const resourceFilters = {
  cluster: k8sName,
  kind: k8sName,
  status: { ...statusProperty, description: `${statusProperty.description}. Without it, gone workloads are left out` },
  search: { ...k8sName, description: 'A prefix of the name' },
  signal: { type: 'string', enum: ZOMBIE_SIGNALS, description: 'Only workloads with this zombie signal' },
} as const;

/** Shape D: `limit` (default 50, 1..200), `cursor`, and the spec's filters. */
export const resourceListQuery = {
  type: 'object',
  properties: {
    ...SHAPE_D_QUERY,
    ...resourceFilters,
    team: { ...k8sName, description: 'A team’s slug or id: workloads of entities it owns' },
    has_gitops: {
      type: 'boolean',
      description: 'Only workloads a GitOps resource manages (true) or none does (false)',
    },
  },
  additionalProperties: false,
} as const;

export const resourcePageSchema = {
  type: 'object',
  required: ['resources', 'next_cursor', 'total'],
  properties: {
    resources: { type: 'array', items: resourceSchema },
    next_cursor: { type: 'string', description: 'Empty when there are no more; sequential only' },
    total: { type: 'integer', description: 'Resources the filters match' },
  },
  additionalProperties: false,
} as const;

export const zombieListQuery = {
  type: 'object',
  properties: { ...SHAPE_D_QUERY, cluster: k8sName, kind: k8sName, signal: resourceFilters.signal },
  additionalProperties: false,
} as const;

export const zombiePageSchema = {
  type: 'object',
  required: ['zombies', 'next_cursor', 'total', 'zombie_age_seconds'],
  properties: {
    zombies: { type: 'array', items: resourceSchema },
    next_cursor: { type: 'string', description: 'Empty when there are no more' },
    total: { type: 'integer' },
    zombie_age_seconds: { type: 'integer', description: 'SHIPYARD_OPERATIONS_ZOMBIE_AGE' },
  },
  additionalProperties: false,
} as const;

export const instancesSchema = {
  type: 'object',
  required: ['instances'],
  properties: {
    instances: {
      type: 'array',
      items: {
        type: 'object',
        required: [
          'cluster_id',
          'namespace',
          'name',
          'kind',
          'replicas',
          'ready_replicas',
          'image',
          'images',
          'last_seen',
        ],
        properties: {
          cluster_id: { type: 'string' },
          namespace: { type: 'string' },
          name: { type: 'string' },
          kind: { type: 'string' },
          replicas: { type: 'integer' },
          ready_replicas: { type: 'integer' },
          image: { type: 'string', description: 'The first container’s image' },
          images: stringArray,
          last_seen: dateTime,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const deploymentsQuery = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  additionalProperties: false,
} as const;

export const deploymentsSchema = {
  type: 'object',
  required: ['deployments'],
  properties: {
    deployments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'cluster_id', 'workload', 'previous_images', 'images', 'deployed_at'],
        properties: {
          id: { type: 'string' },
          cluster_id: { type: 'string' },
          workload: {
            type: 'object',
            required: ['id', 'namespace', 'kind', 'name'],
            properties: {
              id: { type: 'string' },
              namespace: { type: 'string' },
              kind: { type: 'string' },
              name: { type: 'string' },
            },
            additionalProperties: false,
          },
          previous_images: stringArray,
          images: stringArray,
          deployed_at: dateTime,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
