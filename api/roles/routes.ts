import { recordAudit, RefusedAction } from '../../core/audit/store';
import { ApiError, conflict, notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { bundleRoutes } from './bundleRoutes';
import { assignRoleSchema, rolesResponseSchema, roleViewSchema, unassignRoleQuery, userIdParams } from './schemas';
import {
  assignUserRole,
  listRoles,
  resolveRole,
  roleChangeAudit,
  unassignUserRole,
  userExists,
} from '../../core/roles/store';

export const roleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/roles',
    tag: 'Roles',
    access: 'authenticated',
    summary: "Every role: the built-in ones (admin, editor, viewer) and the tenant's role bundles",
    responses: { 200: { description: '`{roles}`', schema: rolesResponseSchema } },
    handler: async ({ db }) => ({ roles: await listRoles(db) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/roles/users/{userId}/roles',
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Assign a role to a user directly (role: a built-in name, role bundle id or name; 409 when held)',
    params: userIdParams,
    body: assignRoleSchema,
    responses: {
      201: {
        description: '`{user_id, role}`',
        schema: {
          type: 'object',
          required: ['user_id', 'role'],
          properties: { user_id: { type: 'string' }, role: roleViewSchema },
        },
      },
    },
    handler: async ({ db, auth, params, body }) => {
      if (!(await userExists(db, params.userId))) throw notFound('User');
      const role = await resolveRole(db, body.role);
      if (!role) throw notFound('Role');
      const event = roleChangeAudit({ type: 'user', id: params.userId }, role, 'assigned');
      if (!(await assignUserRole(db, auth.tenantId, params.userId, role.id))) {
        throw new RefusedAction(conflict(`The user already has role "${role.name}"`), event);
      }
      await recordAudit(db, auth, event);
      return { user_id: params.userId, role };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/roles/users/{userId}/roles',
    tag: 'Roles',
    access: 'admin:write',
    summary: "Remove a user's direct role (?role= a built-in name, role bundle id or name)",
    params: userIdParams,
    query: unassignRoleQuery,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, params, query }) => {
      if (!(await userExists(db, params.userId))) throw notFound('User');
      const role = await resolveRole(db, query.role);
      if (!role) throw notFound('Role');
      if (!(await unassignUserRole(db, params.userId, role.id))) {
        throw new ApiError('NOT_FOUND', `The user does not have role "${role.name}" directly`);
      }
      await recordAudit(db, auth, roleChangeAudit({ type: 'user', id: params.userId }, role, 'unassigned'));
    },
  }),
  ...bundleRoutes,
];
