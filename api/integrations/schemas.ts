import type { FromSchema } from 'json-schema-to-ts';

import { INTEGRATION_STATUSES, INTEGRATION_TYPES } from '../../core/integrations/types';
import { keysetPageSchema } from '../http/pagination';

// Integration request and record shapes, defined once.

const HTTP_URL = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000 } as const;

/** Per type, what its config must hold; types without an entry take any object. */
export const integrationConfigSchemas = {
  'vcs-host-a': {
    type: 'object',
    required: ['base_url', 'token'],
    properties: {
      base_url: { ...HTTP_URL, description: 'The source host REST API root, e.g. https://api.vcs-host-a.example' },
      token: { type: 'string', minLength: 1, maxLength: 4096 },
      organization: { type: 'string', maxLength: 200 },
      webhook_secret: {
        type: 'string',
        minLength: 16,
        maxLength: 256,
        description:
          "The secret set on the host's webhook: POST /integrations/vcs-host-a/webhook?integration=<id> checks " +
          "each delivery's X-Hub-Signature-256 with it (docs/source-host-receiver.md). Sealed and never returned",
      },
    },
  },
  'incident-tool-a': {
    type: 'object',
    required: ['base_url', 'token'],
    properties: {
      base_url: {
        ...HTTP_URL,
        description: 'The incident tool REST API root (docs/integrations.md#the-incident-tool-api)',
      },
      token: { type: 'string', minLength: 1, maxLength: 4096 },
    },
  },
} as const;

const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
const config = { type: 'object', maxProperties: 100 } as const;

const typedConfigRules = Object.entries(integrationConfigSchemas).map(([type, schema]) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  then: { properties: { config: schema } },
}));

export const createIntegrationSchema = {
  type: 'object',
  required: ['name', 'type', 'config'],
  properties: { name, type: { type: 'string', enum: INTEGRATION_TYPES }, config },
  additionalProperties: false,
  allOf: typedConfigRules,
} as const;

export const updateIntegrationSchema = {
  type: 'object',
  minProperties: 1,
  properties: { name, config, status: { type: 'string', enum: INTEGRATION_STATUSES } },
  additionalProperties: false,
} as const;

export const integrationSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'type',
    'status',
    'config',
    'secrets',
    'last_sync',
    'status_message',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    type: { type: 'string', enum: INTEGRATION_TYPES },
    status: { type: 'string', enum: INTEGRATION_STATUSES },
    config: {
      type: 'object',
      description:
        'The config without its secrets: the values of keys that name a credential (`token`, `*_secret`, `password`, ' +
        '`api_key`, …), in any case and at any depth',
    },
    secrets: {
      type: 'array',
      items: { type: 'string' },
      description: 'Paths of the secrets that are set, e.g. `token`, `auth.password` (their values are never returned)',
    },
    last_sync: { type: ['string', 'null'], format: 'date-time', description: 'The last successful sync' },
    status_message: {
      type: ['string', 'null'],
      description: 'With status `error`: why the last sync failed (the next success clears it)',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const integrationsPageSchema = keysetPageSchema('integrations', integrationSchema);

/** A configuration as GET /integrations/configs lists it. */
export const integrationConfigSchema = {
  type: 'object',
  required: ['id', 'name', 'type', 'status', 'config', 'secrets', 'synced'],
  properties: {
    id: integrationSchema.properties.id,
    name: integrationSchema.properties.name,
    type: integrationSchema.properties.type,
    status: integrationSchema.properties.status,
    config: integrationSchema.properties.config,
    secrets: integrationSchema.properties.secrets,
    synced: {
      type: 'boolean',
      description: 'Whether a sync pulls from it (POST /integrations/{id}/sync, the schedule)',
    },
  },
  additionalProperties: false,
} as const;

export const integrationConfigsPageSchema = keysetPageSchema('configs', integrationConfigSchema);

export const syncStartedSchema = {
  type: 'object',
  required: ['integration_id', 'workflow_id', 'started_at', 'already_running'],
  properties: {
    integration_id: { type: 'string', format: 'uuid' },
    workflow_id: {
      type: 'string',
      description: 'The Temporal workflow of the sync: `integration-sync-<integration_id>`',
    },
    started_at: { type: 'string', format: 'date-time' },
    already_running: {
      type: 'boolean',
      description: 'A sync of the integration was running: this is that one, and no second was started',
    },
  },
  additionalProperties: false,
} as const;

export const integrationIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;

export type CreateIntegrationRequest = FromSchema<typeof createIntegrationSchema>;
export type UpdateIntegrationRequest = FromSchema<typeof updateIntegrationSchema>;
