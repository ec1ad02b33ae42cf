import { TEAM_MEMBER_ROLES } from '../../core/teams/types';
import { IDENTITY_PROVIDERS } from '../../core/users/types';
import { activityItemSchema } from '../audit/schemas';
import { keysetPageSchema } from '../http/pagination';
import { roleRef, roleViewSchema } from '../roles/schemas';

/** Lowercase kebab case. */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
const description = { type: 'string', maxLength: 2000 } as const;
const metadata = { type: 'object', maxProperties: 100 } as const;
const parentId = { type: ['string', 'null'], format: 'uuid' } as const;

export const teamSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'description', 'metadata', 'parent_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    slug: { type: 'string' },
    description: { type: 'string' },
    metadata: { type: 'object' },
    parent_id: { type: ['string', 'null'], format: 'uuid' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const teamListItemSchema = {
  ...teamSchema,
  required: [...teamSchema.required, 'member_count'],
  properties: { ...teamSchema.properties, member_count: { type: 'integer' } },
} as const;

export const teamMemberSchema = {
  type: 'object',
  required: ['user_id', 'name', 'email', 'role'],
  properties: {
    user_id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string', enum: TEAM_MEMBER_ROLES },
  },
  additionalProperties: false,
} as const;

export const groupMappingSchema = {
  type: 'object',
  required: ['id', 'group_name', 'provider', 'role'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    group_name: { type: 'string' },
    provider: { type: 'string', enum: IDENTITY_PROVIDERS },
    role: { type: 'string', enum: TEAM_MEMBER_ROLES },
  },
  additionalProperties: false,
} as const;

/** Shape A's `page` (api/http/pagination.ts `ShapeAPage`), shared with the entity lists. */
export const shapeAPageSchema = {
  type: 'object',
  required: ['limit', 'total', 'nextCursor', 'prevCursor'],
  properties: {
    limit: { type: 'integer' },
    total: { type: 'integer' },
    nextCursor: { type: ['string', 'null'], description: 'null on the last page' },
    prevCursor: { type: ['string', 'null'], description: 'null on the first page' },
  },
  additionalProperties: false,
} as const;

export const teamListSchema = {
  type: 'object',
  required: ['teams', 'page'],
  properties: { teams: { type: 'array', items: teamListItemSchema }, page: shapeAPageSchema },
  additionalProperties: false,
} as const;

export const teamDetailsSchema = {
  type: 'object',
  required: ['team', 'members', 'group_mappings', 'roles'],
  properties: {
    team: teamSchema,
    members: { type: 'array', items: teamMemberSchema },
    group_mappings: { type: 'array', items: groupMappingSchema },
    roles: { type: 'array', items: roleViewSchema },
    audit_log: {
      type: 'array',
      items: activityItemSchema,
      description: 'The 50 newest audit entries about the team; only for admin:read holders',
    },
  },
  additionalProperties: false,
} as const;

export const membersPageSchema = keysetPageSchema('members', teamMemberSchema);

export const mappingsPageSchema = keysetPageSchema('mappings', groupMappingSchema);

export const createTeamSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name,
    slug: { type: 'string', minLength: 1, maxLength: 100, pattern: SLUG_PATTERN },
    description: { ...description, default: '' },
    parent_id: { ...parentId, default: null },
    metadata: { ...metadata, default: {} },
  },
  additionalProperties: false,
} as const;

export const updateTeamSchema = {
  type: 'object',
  minProperties: 1,
  properties: { name, description, parent_id: parentId, metadata },
  additionalProperties: false,
} as const;

export const addMemberSchema = {
  type: 'object',
  required: ['user_id', 'role'],
  properties: { user_id: { type: 'string', format: 'uuid' }, role: { type: 'string', enum: TEAM_MEMBER_ROLES } },
  additionalProperties: false,
} as const;

export const addMappingSchema = {
  type: 'object',
  required: ['group_name', 'provider'],
  properties: {
    group_name: { type: 'string', minLength: 1, maxLength: 255 },
    provider: { type: 'string', enum: IDENTITY_PROVIDERS },
    role: { type: 'string', enum: TEAM_MEMBER_ROLES, default: 'member' },
  },
  additionalProperties: false,
} as const;

export const addTeamRoleSchema = {
  type: 'object',
  required: ['role_id'],
  properties: { role_id: roleRef },
  additionalProperties: false,
} as const;

const uuid = { type: 'string', format: 'uuid' } as const;

export const teamIdParams = { type: 'object', required: ['id'], properties: { id: uuid } } as const;
export const teamRefParams = {
  type: 'object',
  required: ['id_or_slug'],
  properties: { id_or_slug: { type: 'string', minLength: 1, maxLength: 100 } },
} as const;
export const memberParams = {
  type: 'object',
  required: ['id', 'memberId'],
  properties: { id: uuid, memberId: uuid },
} as const;
export const mappingParams = {
  type: 'object',
  required: ['id', 'mappingId'],
  properties: { id: uuid, mappingId: uuid },
} as const;
export const teamRoleParams = {
  type: 'object',
  required: ['id', 'roleId'],
  properties: { id: uuid, roleId: roleRef },
} as const;
