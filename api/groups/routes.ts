import { listGroups } from '../../core/groups/store';
import { assignRole, unassignRole } from '../../core/roles/commands';
import { assignedRolesPage } from '../../core/roles/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { keysetQuery, rolesPageSchema, roleViewSchema } from '../roles/schemas';
import { addGroupRoleSchema, groupParams, groupRoleParams, groupsPageSchema } from './schemas';

export const groupRoutes = [
  defineRoute({
    method: 'GET',
    path: '/groups',
    tag: 'Groups',
    // Which groups exist and the roles they bring describe the tenant's access: administration.
    access: 'admin:read',
    summary:
      'Identity-provider groups the tenant maps to teams or roles, by name (membership itself lives in the identity provider)',
    query: keysetQuery,
    responses: { 200: { description: '`{groups, next_cursor}`', schema: groupsPageSchema } },
    handler: async ({ db, query, deps }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listGroups(db, window), window);
      // A group only a role mapping or a sign-in names is the configured provider's.
      const groups = page.items.map((group) => ({ ...group, provider: group.provider ?? deps.config.auth.provider }));
      return { groups, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/groups/{groupName}/roles',
    tag: 'Groups',
    access: 'admin:read',
    summary:
      "The roles every member of a group receives (empty for a group with none: groups are the identity provider's)",
    params: groupParams,
    query: keysetQuery,
    responses: { 200: { description: '`{roles, next_cursor}`', schema: rolesPageSchema } },
    handler: async ({ db, params, query }) => {
      const window = shapeDWindow(query);
      const roles = await assignedRolesPage(db, 'group_roles', { group_name: params.groupName }, window);
      const page = shapeDPage(roles, window);
      return { roles: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/groups/{groupName}/roles',
    changesAccess: true,
    tag: 'Groups',
    access: 'admin:write',
    summary: 'Map a role to a group: every user whose token carries the group gets it (409 when mapped)',
    params: groupParams,
    body: addGroupRoleSchema,
    responses: {
      201: {
        description: '`{group_name, role}`',
        schema: {
          type: 'object',
          required: ['group_name', 'role'],
          properties: { group_name: { type: 'string' }, role: roleViewSchema },
          additionalProperties: false,
        },
      },
    },
    handler: async ({ db, auth, params, body }) => ({
      group_name: params.groupName,
      role: await assignRole(db, auth, { type: 'group', id: params.groupName }, body.role),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/groups/{groupName}/roles/{roleName}',
    changesAccess: true,
    tag: 'Groups',
    access: 'admin:write',
    summary: 'Remove a role from a group (roleName: a built-in name, role bundle id or name)',
    params: groupRoleParams,
    responses: { 204: { description: 'Removed' } },
    handler: ({ db, auth, params }) => unassignRole(db, auth, { type: 'group', id: params.groupName }, params.roleName),
  }),
];
