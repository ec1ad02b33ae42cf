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

export const connectionPoolUsageSchema = {
  type: 'object',
  description:
    "This API process's pool of database connections (the app role), which every request draws from: " +
    'saturated when all are in use, with `pending` requests waiting for one. The database can be up while the pool is saturated.',
  required: ['max', 'used', 'free', 'pending', 'saturated'],
  properties: {
    max: { type: 'integer', description: 'Connections the pool may open (DATABASE_POOL_MAX)' },
    used: { type: 'integer', description: 'Connections held by requests now' },
    free: { type: 'integer', description: 'Open connections waiting for a request' },
    pending: { type: 'integer', description: 'Requests waiting for a connection' },
    saturated: { type: 'boolean', description: 'Every connection is in use' },
  },
  additionalProperties: false,
} as const;

export const databaseHealthSchema = {
  type: 'object',
  description:
    'Checked on a connection of its own, outside the pool, so a saturated pool does not read as a database outage',
  required: ['status', 'latency_ms'],
  properties: { ...serviceHealthProperties, pool: connectionPoolUsageSchema },
  additionalProperties: false,
} as const;

export const changeListenerHealthSchema = {
  type: 'object',
  description:
    "This API process's LISTEN connection, by which its caches (API keys, teams, sessions) and run-log streams learn of " +
    'changes other processes commit. While it is down the caches serve nothing and log streams re-read on a timer.',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['up', 'down'] },
    down_since: { type: 'string', format: 'date-time', description: 'When the outage began (down only)' },
    error: { type: 'string', description: 'The latest reason it could not listen (down only)' },
  },
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
      required: ['database', 'elasticsearch', 'temporal', 'change_listener'],
      properties: {
        database: databaseHealthSchema,
        change_listener: changeListenerHealthSchema,
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
export type ConnectionPoolUsage = FromSchema<typeof connectionPoolUsageSchema>;
export type SystemHealth = FromSchema<typeof systemHealthSchema>;
