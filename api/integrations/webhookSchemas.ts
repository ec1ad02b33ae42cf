import { DELIVERY_STATUSES, EVENT_KINDS } from '../../core/webhooks/types';
import { keysetPageSchema } from '../http/pagination';

// Outbound webhook request and record shapes, defined once (docs/webhooks.md).

const url = {
  type: 'string',
  format: 'uri',
  pattern: '^https?://',
  maxLength: 2000,
  description: 'Where deliveries are POSTed; checked by the egress guard at every attempt',
} as const;
const events = {
  type: 'array',
  minItems: 1,
  maxItems: EVENT_KINDS.length,
  uniqueItems: true,
  // Not an enum: an unknown kind is refused by name (INVALID_REQUEST naming it).
  items: { type: 'string', minLength: 1, maxLength: 100 },
  description: `Event kinds delivered: ${EVENT_KINDS.join(', ')}`,
} as const;
const secret = {
  type: 'string',
  maxLength: 200,
  description:
    'Standard Webhooks signing secret, `whsec_` and the base64 of 24 to 64 bytes. Never returned by a read; ' +
    'when left out on creation one is generated and returned once, in the 201',
} as const;
const active = { type: 'boolean' } as const;

export const createWebhookSchema = {
  type: 'object',
  required: ['url', 'events'],
  properties: { url, events, secret, active },
  additionalProperties: false,
} as const;

export const updateWebhookSchema = {
  type: 'object',
  minProperties: 1,
  properties: { url, events, secret, active },
  additionalProperties: false,
} as const;

export const webhookSchema = {
  type: 'object',
  required: ['id', 'integration_id', 'url', 'events', 'active', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    integration_id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string', enum: EVENT_KINDS } },
    active: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const createdWebhookSchema = {
  ...webhookSchema,
  properties: {
    ...webhookSchema.properties,
    secret: { type: 'string', description: 'The generated secret, only when none was sent: shown this once' },
  },
} as const;

export const webhooksPageSchema = keysetPageSchema('webhooks', webhookSchema);

const attemptSchema = {
  type: 'object',
  required: ['attempt', 'at', 'status_code', 'duration_ms', 'error'],
  properties: {
    attempt: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
    status_code: {
      type: ['integer', 'null'],
      description: 'null when no answer came (timeout, network, egress guard)',
    },
    duration_ms: { type: 'integer' },
    error: { type: ['string', 'null'] },
  },
  additionalProperties: false,
} as const;

export const deliverySchema = {
  type: 'object',
  required: [
    'id',
    'webhook_id',
    'event_id',
    'event_type',
    'message_id',
    'status',
    'attempts',
    'attempt_log',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    webhook_id: { type: 'string', format: 'uuid' },
    event_id: { type: 'string', format: 'uuid' },
    event_type: { type: 'string', enum: EVENT_KINDS },
    message_id: { type: 'string', description: 'The `webhook-id` header: the same across retries and redeliveries' },
    status: { type: 'string', enum: DELIVERY_STATUSES },
    attempts: { type: 'integer' },
    attempt_log: { type: 'array', items: attemptSchema, description: 'The latest attempts (at most 50), oldest first' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const deliveriesPageSchema = keysetPageSchema('deliveries', deliverySchema);

export const webhookIdParams = {
  type: 'object',
  required: ['webhookId'],
  properties: { webhookId: { type: 'string', format: 'uuid' } },
} as const;

export const deliveryIdParams = {
  type: 'object',
  required: ['webhookId', 'deliveryId'],
  properties: { webhookId: { type: 'string', format: 'uuid' }, deliveryId: { type: 'string', format: 'uuid' } },
} as const;
