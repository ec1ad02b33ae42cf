import { ZOMBIE_SIGNALS } from '../../core/operations/types';
import { dateTime, entityRefSchema, nullableDateTime, statusProperty, stringArray } from './schemas';
import { SHAPE_D_QUERY } from '../http/pagination';
import { k8sName } from '../k8s/schemas';

// Schemas of /operations/resources, the zombies and the entity's k8s sub-resources (resourceRoutes.ts).

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
