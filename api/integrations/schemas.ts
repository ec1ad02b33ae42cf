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
  required: ['id', 'name', 'type', 'status', 'config', 'secrets', 'last_sync', 'created_at', 'updated_at'],
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
    last_sync: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const integrationsPageSchema = keysetPageSchema('integrations', integrationSchema);

export const integrationIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;

export type CreateIntegrationRequest = FromSchema<typeof createIntegrationSchema>;
export type UpdateIntegrationRequest = FromSchema<typeof updateIntegrationSchema>;
