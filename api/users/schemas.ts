import { IDENTITY_PROVIDERS } from '../../core/users/types';
import { SHAPE_C_USERS_QUERY, SHAPE_C_ADMIN_USERS_QUERY } from '../http/pagination';

const search = { type: 'string', maxLength: 200 } as const;

export const userSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'picture', 'last_login', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    picture: { type: ['string', 'null'] },
    last_login: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const userDetailSchema = {
  ...userSchema,
  required: [...userSchema.required, 'tenant_id', 'teams', 'groups', 'roles'],
  properties: {
    ...userSchema.properties,
    tenant_id: { type: 'string', format: 'uuid' },
    teams: {
      type: 'array',
      items: { type: 'string' },
      description:
        'Slugs of the teams the user belongs to: as a member, or through an identity-provider group mapped to the team',
    },
    groups: {
      type: 'array',
      items: { type: 'string' },
      description: "The identity-provider groups of the user's latest sign-in",
    },
    roles: {
      type: 'array',
      items: { type: 'string' },
      description: "Names of the roles held directly, through the user's teams and through their groups",
    },
  },
} as const;

const idpPageSchema = {
  type: 'object',
  required: ['first', 'max', 'count', 'hasMore'],
  properties: {
    first: { type: 'integer' },
    max: { type: 'integer' },
    count: { type: 'integer' },
    hasMore: { type: 'boolean' },
    nextCursor: { type: ['string', 'null'], description: 'For callers that page with limit and cursor (/users only)' },
  },
  additionalProperties: false,
} as const;

const provider = { type: 'string', enum: IDENTITY_PROVIDERS } as const;

export const userListSchema = {
  type: 'object',
  required: ['users', 'items', 'page', 'total', 'provider'],
  properties: {
    users: { type: 'array', items: userSchema },
    items: { type: 'array', items: userSchema, description: 'The same users, under the shape C key' },
    page: idpPageSchema,
    total: { type: 'integer' },
    provider,
  },
  additionalProperties: false,
} as const;

export const adminUserListSchema = {
  type: 'object',
  required: ['items', 'page', 'total', 'provider'],
  properties: {
    items: {
      type: 'array',
      items: {
        ...userSchema,
        required: [...userSchema.required, 'roles', 'teams'],
        properties: {
          ...userSchema.properties,
          roles: { type: 'array', items: { type: 'string' }, description: 'Directly assigned role names' },
          teams: {
            type: 'array',
            items: { type: 'string' },
            description: 'Team slugs: as a member or through a mapped group',
          },
        },
      },
    },
    page: idpPageSchema,
    total: { type: 'integer' },
    provider,
  },
  additionalProperties: false,
} as const;

/** Shape C (`first`, `max`), plus `limit` and `cursor`, which take precedence when sent. */
export const userListQuery = {
  type: 'object',
  properties: {
    ...SHAPE_C_USERS_QUERY,
    limit: { type: 'integer', minimum: 1, maximum: 200 },
    cursor: { type: 'string', maxLength: 512 },
    search,
  },
  additionalProperties: false,
} as const;

export const adminUserListQuery = {
  type: 'object',
  properties: { ...SHAPE_C_ADMIN_USERS_QUERY, search },
  additionalProperties: false,
} as const;

export const userIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;
