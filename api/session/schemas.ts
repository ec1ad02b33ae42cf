import { SCOPES } from '../../core/auth/permissions';

const names = (description: string) => ({ type: 'array', items: { type: 'string' }, description }) as const;

export const currentUserSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'picture', 'tenant_id', 'teams', 'groups', 'roles', 'permissions'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    picture: { type: ['string', 'null'] },
    tenant_id: { type: 'string', format: 'uuid' },
    teams: names('Slugs of the teams the caller belongs to, directly or through a group of the token'),
    groups: names("The token's identity-provider groups (none for an API key)"),
    roles: names('Names of the roles the caller holds (none for an API key, which acts with its scopes)'),
    permissions: { type: 'array', items: { type: 'string', enum: SCOPES }, description: 'Every scope granted' },
    api_key_id: { type: 'string', format: 'uuid', description: 'Present when the caller is an API key' },
  },
  additionalProperties: false,
} as const;

export const authStatusSchema = {
  type: 'object',
  required: ['authenticated', 'user', 'expires_at'],
  properties: {
    authenticated: { type: 'boolean' },
    user: {
      type: 'object',
      required: ['email', 'name', 'tenant_id'],
      properties: {
        email: { type: 'string' },
        name: { type: 'string' },
        tenant_id: { type: 'string', format: 'uuid' },
      },
      additionalProperties: false,
    },
    expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the credentials stop working; null for an API key that does not expire',
    },
  },
  additionalProperties: false,
} as const;
