import { recordAudit, RefusedAction } from '../../core/audit/store';
import { ApiError, conflict, notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { rolesResponseSchema, roleViewSchema } from '../roles/schemas';
import { assignedRoles, resolveRole, roleChangeAudit } from '../../core/roles/store';
import { addGroupRoleSchema, groupParams, groupRoleParams, groupSchema } from './schemas';
import { addGroupRole, listGroups, removeGroupRole } from '../../core/groups/store';

export const groupRoutes = [
  defineRoute({
    method: 'GET',
    path: '/groups',
    tag: 'Groups',
    // Which groups exist and the roles they bring describe the tenant's access: administration.
    access: 'admin:read',
    summary:
      'Identity-provider groups the tenant maps to teams or roles (membership itself lives in the identity provider)',
    responses: {
      200: {
        description: '`{groups}`',
        schema: { type: 'object', properties: { groups: { type: 'array', items: groupSchema } } },
      },
    },
    handler: async ({ db }) => ({ groups: await listGroups(db) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/groups/{groupName}/roles',
    tag: 'Groups',
    access: 'admin:read',
    summary:
      "The roles every member of a group receives (empty for a group with none: groups are the identity provider's)",
    params: groupParams,
    responses: { 200: { description: '`{roles}`', schema: rolesResponseSchema } },
    handler: async ({ db, params }) => ({
      roles: await assignedRoles(db, 'group_roles', { group_name: params.groupName }),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/groups/{groupName}/roles',
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
        },
      },
    },
    handler: async ({ db, auth, params, body }) => {
      const role = await resolveRole(db, body.role);
      if (!role) throw notFound('Role');
      const event = roleChangeAudit({ type: 'group', id: params.groupName }, role, 'assigned');
      if (!(await addGroupRole(db, auth.tenantId, params.groupName, role.id))) {
        throw new RefusedAction(conflict(`Group "${params.groupName}" already has role "${role.name}"`), event);
      }
      await recordAudit(db, auth, event);
      return { group_name: params.groupName, role };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/groups/{groupName}/roles/{roleName}',
    tag: 'Groups',
    access: 'admin:write',
    summary: 'Remove a role from a group (roleName: a built-in name, role bundle id or name)',
    params: groupRoleParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, params }) => {
      const role = await resolveRole(db, params.roleName);
      if (!role) throw notFound('Role');
      if (!(await removeGroupRole(db, params.groupName, role.id))) {
        throw new ApiError('NOT_FOUND', `Group "${params.groupName}" does not have role "${role.name}"`);
      }
      await recordAudit(db, auth, roleChangeAudit({ type: 'group', id: params.groupName }, role, 'unassigned'));
    },
  }),
];
