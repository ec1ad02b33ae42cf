import { API_KEY_LIST_FILTERS } from '../../core/apiKeys/types';
import { SCOPES } from '../../core/auth/permissions';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';

const scopes = { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES } } as const;

export const createApiKeySchema = {
  type: 'object',
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    scopes,
    description: { type: 'string', maxLength: 2000, default: '' },
    expires_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const createdApiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'token', 'scopes'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    token: { type: 'string', description: 'The full token: shown in this response only' },
    scopes,
  },
  additionalProperties: false,
} as const;

export const apiKeySchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'description',
    'prefix',
    'scopes',
    'created_by',
    'created_by_key_id',
    'last_used',
    'expires_at',
    'created_at',
    'revoked',
    'revoked_at',
  ],
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
    scopes: { type: 'array', items: { type: 'string', enum: SCOPES } },
    last_used: { type: ['string', 'null'], format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    revoked: { type: 'boolean' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const apiKeyListQuery = {
  type: 'object',
  properties: {
    ...keysetListQuery(),
    status: {
      type: 'string',
      enum: API_KEY_LIST_FILTERS,
      default: 'active',
      description:
        'active (default): usable keys; expired: past expires_at; revoked: revoked ones, kept for the record; all',
    },
  },
  additionalProperties: false,
} as const;

export const apiKeyListSchema = keysetPageSchema('keys', apiKeySchema);

export const keyIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;
