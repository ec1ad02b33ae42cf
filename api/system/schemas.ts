import type { FromSchema } from 'json-schema-to-ts';

const serviceHealthProperties = {
  status: { type: 'string', enum: ['up', 'down'] },
  latency_ms: { type: 'number', description: 'How long the check took' },
  error: { type: 'string', description: 'Why the check failed (down only)' },
} as const;

export const serviceHealthSchema = {
  type: 'object',
  required: ['status', 'latency_ms'],
  properties: serviceHealthProperties,
  additionalProperties: false,
} as const;

export const poolHealthSchema = {
  type: 'object',
  required: ['status', 'latency_ms', 'task_queue'],
  properties: {
    ...serviceHealthProperties,
    task_queue: { type: 'string' },
    worker_identity: { type: 'string', description: 'The worker that answered the probe' },
  },
  additionalProperties: false,
} as const;

export const systemHealthSchema = {
  type: 'object',
  required: ['status', 'checked_at', 'services', 'worker_pools'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'], description: 'ok when every check is up' },
    checked_at: { type: 'string', format: 'date-time' },
    services: {
      type: 'object',
      required: ['database', 'elasticsearch', 'temporal'],
      properties: {
        database: serviceHealthSchema,
        elasticsearch: serviceHealthSchema,
        temporal: {
          type: 'object',
          required: ['status', 'latency_ms'],
          properties: {
            ...serviceHealthProperties,
            ui_url: {
              type: 'string',
              description: "Temporal Web UI: for platform operators only (it shows every tenant's runs)",
            },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    worker_pools: {
      type: 'object',
      description: 'Each pool is probed with a real workflow round trip (API → Temporal → worker → database)',
      required: ['forge', 'search', 'platform'],
      properties: { forge: poolHealthSchema, search: poolHealthSchema, platform: poolHealthSchema },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export type ServiceHealth = FromSchema<typeof serviceHealthSchema>;
export type PoolHealth = FromSchema<typeof poolHealthSchema>;
export type SystemHealth = FromSchema<typeof systemHealthSchema>;
