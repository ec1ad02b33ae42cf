import { SCOPES } from '../../core/auth/permissions';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';

/** A bundle name: trimmed, and never shaped like a uuid (a role reference may be either). */
const bundleName = { type: 'string', minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$' } as const;
const permissions = { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES } } as const;
/** A role reference: a built-in name, a bundle id or a bundle name. */
export const roleRef = { type: 'string', minLength: 1, maxLength: 100 } as const;

export const roleViewSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'permissions', 'built_in'],
  properties: {
    id: { type: 'string', description: "The role's key: a built-in name or a role bundle's id" },
    name: { type: 'string' },
    description: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string', enum: SCOPES } },
    built_in: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

/** `limit` and `cursor` of a bounded list (api/http/pagination.ts `keysetListQuery`), nothing else. */
export const keysetQuery = { type: 'object', properties: keysetListQuery(), additionalProperties: false } as const;

export const rolesPageSchema = keysetPageSchema('roles', roleViewSchema);

export const bundleSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'permissions', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string', enum: SCOPES } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const bundlesPageSchema = keysetPageSchema('bundles', bundleSchema);

export const createBundleSchema = {
  type: 'object',
  required: ['name', 'permissions'],
  properties: { name: bundleName, description: { type: 'string', maxLength: 2000, default: '' }, permissions },
  additionalProperties: false,
} as const;

export const updateBundleSchema = {
  type: 'object',
  minProperties: 1,
  properties: { name: bundleName, description: { type: 'string', maxLength: 2000 }, permissions },
  additionalProperties: false,
} as const;

export const bundleIdParams = {
  type: 'object',
  required: ['bundleId'],
  properties: { bundleId: { type: 'string', format: 'uuid' } },
} as const;

export const userIdParams = {
  type: 'object',
  required: ['userId'],
  properties: { userId: { type: 'string', format: 'uuid' } },
} as const;

export const assignRoleSchema = {
  type: 'object',
  required: ['role'],
  properties: { role: roleRef },
  additionalProperties: false,
} as const;

export const unassignRoleQuery = {
  type: 'object',
  required: ['role'],
  properties: { role: roleRef },
  additionalProperties: false,
} as const;
