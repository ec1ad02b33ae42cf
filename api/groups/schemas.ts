import { IDENTITY_PROVIDERS } from '../../core/users/types';
import { keysetPageSchema } from '../http/pagination';
import { roleRef } from '../roles/schemas';

const groupName = { type: 'string', minLength: 1, maxLength: 255 } as const;

export const groupSchema = {
  type: 'object',
  required: ['name', 'provider', 'member_count', 'roles', 'teams'],
  properties: {
    name: { type: 'string' },
    provider: { type: 'string', enum: IDENTITY_PROVIDERS },
    member_count: {
      type: 'integer',
      description: 'Users whose latest sign-in carried the group (membership itself lives in the identity provider)',
    },
    roles: { type: 'array', items: { type: 'string' }, description: 'Names of the roles mapped to the group' },
    teams: { type: 'array', items: { type: 'string' }, description: 'Slugs of the teams the group is mapped to' },
  },
  additionalProperties: false,
} as const;

export const groupsPageSchema = keysetPageSchema('groups', groupSchema);

export const groupParams = { type: 'object', required: ['groupName'], properties: { groupName: groupName } } as const;

export const groupRoleParams = {
  type: 'object',
  required: ['groupName', 'roleName'],
  properties: { groupName: groupName, roleName: roleRef },
} as const;

export const addGroupRoleSchema = {
  type: 'object',
  required: ['role'],
  properties: { role: roleRef },
  additionalProperties: false,
} as const;
