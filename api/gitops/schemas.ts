import { GITOPS_COMMAND_ACTIONS, GITOPS_COMMAND_STATUSES } from '../../core/gitops/types';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';
import { k8sName } from '../k8s/schemas';
import { countsSchema } from '../operations/schemas';

// Request and response schemas of the GitOps routes (api/gitops/routes.ts).

// Free text is bounded like the names (k8sName).
const shortText = { type: ['string', 'null'], maxLength: 256 } as const;
const urlText = { type: ['string', 'null'], maxLength: 2048 } as const;

const labelsSchema = {
  type: 'object',
  maxProperties: 64,
  propertyNames: { maxLength: 317 },
  additionalProperties: { type: 'string', maxLength: 1024 },
  description: 'Labels of the resource; `shipyard.dev/service-id` links it to the entity of that service id',
} as const;

export const gitopsPushSchema = {
  type: 'object',
  required: ['cluster_id', 'resources'],
  properties: {
    cluster_id: { ...k8sName, description: 'The cluster the agent token was issued for' },
    resources: {
      type: 'array',
      description:
        'Every GitOps resource of the cluster (a full snapshot: those left out are marked gone); at most SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH (413 past it)',
      items: {
        type: 'object',
        required: ['namespace', 'kind', 'name'],
        properties: {
          namespace: k8sName,
          kind: { type: 'string', minLength: 1, maxLength: 128 },
          name: k8sName,
          tool: { ...shortText, description: 'The GitOps tool (argocd, flux, …)' },
          sync_status: shortText,
          health_status: shortText,
          revision: shortText,
          source_url: urlText,
          source_path: urlText,
          labels: labelsSchema,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const gitopsPushResultSchema = {
  type: 'object',
  required: ['received', 'created', 'updated', 'gone'],
  properties: {
    received: { type: 'integer' },
    created: { type: 'integer' },
    updated: { type: 'integer' },
    gone: { type: 'integer', description: 'Resources of the cluster this push left out, now marked gone' },
  },
  additionalProperties: false,
} as const;

export const gitopsResourceSchema = {
  type: 'object',
  required: [
    'id',
    'cluster_id',
    'namespace',
    'kind',
    'name',
    'tool',
    'sync_status',
    'health_status',
    'revision',
    'source_url',
    'source_path',
    'entity_id',
    'labels',
    'first_seen_at',
    'last_seen_at',
    'gone_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    cluster_id: { type: 'string' },
    namespace: { type: 'string' },
    kind: { type: 'string' },
    name: { type: 'string' },
    tool: { type: ['string', 'null'] },
    sync_status: { type: ['string', 'null'] },
    health_status: { type: ['string', 'null'] },
    revision: { type: ['string', 'null'] },
    source_url: { type: ['string', 'null'] },
    source_path: { type: ['string', 'null'] },
    entity_id: { type: ['string', 'null'], description: 'The entity its `shipyard.dev/service-id` label names' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    first_seen_at: { type: 'string', format: 'date-time' },
    last_seen_at: { type: 'string', format: 'date-time' },
    gone_at: { type: ['string', 'null'], format: 'date-time', description: 'When a push first left it out' },
  },
  additionalProperties: false,
} as const;

export const commandSchema = {
  type: 'object',
  required: [
    'id',
    'cluster_id',
    'resource_id',
    'action',
    'status',
    'message',
    'requested_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    cluster_id: { type: 'string' },
    resource_id: { type: 'string', format: 'uuid' },
    action: { type: 'string', enum: GITOPS_COMMAND_ACTIONS },
    status: { type: 'string', enum: GITOPS_COMMAND_STATUSES },
    message: { type: ['string', 'null'] },
    requested_by: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const agentCommandsSchema = {
  type: 'object',
  required: ['commands'],
  properties: {
    commands: {
      type: 'array',
      items: {
        ...commandSchema,
        required: [...commandSchema.required, 'resource'],
        properties: {
          ...commandSchema.properties,
          resource: {
            type: 'object',
            required: ['namespace', 'kind', 'name'],
            properties: { namespace: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } },
            additionalProperties: false,
          },
        },
      },
    },
  },
  additionalProperties: false,
} as const;

export const commandReportSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: {
      type: 'string',
      enum: GITOPS_COMMAND_STATUSES,
      description: 'pending → running, succeeded or failed; running → succeeded or failed; any other move is a 409',
    },
    message: { type: ['string', 'null'], maxLength: 4096 },
  },
  additionalProperties: false,
} as const;

export const agentCommandParams = {
  type: 'object',
  required: ['clusterId', 'commandId'],
  properties: { clusterId: k8sName, commandId: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
} as const;

export const gitopsListQuery = {
  type: 'object',
  properties: {
    ...keysetListQuery(50, 200),
    cluster: k8sName,
    namespace: k8sName,
    tool: k8sName,
    sync_status: k8sName,
    health_status: k8sName,
    search: { ...k8sName, description: 'A prefix of the name' },
    include_gone: { type: 'boolean', default: false, description: 'Also list resources a push has left out' },
  },
  additionalProperties: false,
} as const;

export const gitopsPageSchema = keysetPageSchema('resources', gitopsResourceSchema);

export const gitopsStatsSchema = {
  type: 'object',
  required: ['total', 'by_sync_status', 'by_health_status', 'by_tool', 'by_cluster'],
  properties: {
    total: { type: 'integer', description: 'Resources present (not gone)' },
    by_sync_status: countsSchema,
    by_health_status: countsSchema,
    by_tool: countsSchema,
    by_cluster: countsSchema,
  },
  additionalProperties: false,
} as const;

export const gitopsDetailSchema = {
  type: 'object',
  required: ['resource', 'commands'],
  properties: {
    resource: gitopsResourceSchema,
    commands: { type: 'array', items: commandSchema, description: 'The most recent commands, newest first' },
  },
  additionalProperties: false,
} as const;

export const queuedCommandSchema = {
  type: 'object',
  required: ['command'],
  properties: { command: commandSchema },
  additionalProperties: false,
} as const;
