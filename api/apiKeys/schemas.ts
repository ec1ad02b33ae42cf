import { SCOPES } from '../../core/auth/permissions';

export const createApiKeySchema = {
  type: 'object',
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES } },
    description: { type: 'string', maxLength: 2000 },
    expires_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const apiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'prefix', 'scopes', 'created_by', 'created_at', 'revoked'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    created_by: {
      type: 'string',
      format: 'uuid',
      description: 'The user who created the key (it counts against their 25)',
    },
    created_by_key_id: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'The API key that created this one, when it was not created by a signed-in user',
    },
    name: { type: 'string' },
    description: { type: 'string' },
    prefix: { type: 'string', description: 'The first 12 characters of the token' },
    scopes: { type: 'array', items: { type: 'string' } },
    last_used: { type: ['string', 'null'], format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    revoked: { type: 'boolean' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const keyIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;
