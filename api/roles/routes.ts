import { assignRole, unassignRole } from '../../core/roles/commands';
import { listRoles } from '../../core/roles/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { bundleRoutes } from './bundleRoutes';
import {
  assignRoleSchema,
  keysetQuery,
  rolesPageSchema,
  roleViewSchema,
  unassignRoleQuery,
  userIdParams,
} from './schemas';

export const roleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/roles',
    tag: 'Roles',
    access: 'authenticated',
    summary: "Every role: the built-in ones (admin, editor, viewer), then the tenant's role bundles by name",
    query: keysetQuery,
    responses: { 200: { description: '`{roles, next_cursor}`', schema: rolesPageSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      // Its one read is the request's last statement.
      const page = shapeDPage(await listRoles(db, window), window);
      return { roles: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/roles/users/{userId}/roles',
    changesAccess: true,
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
          properties: { user_id: { type: 'string', format: 'uuid' }, role: roleViewSchema },
          additionalProperties: false,
        },
      },
    },
    handler: async ({ db, auth, params, body }) => ({
      user_id: params.userId,
      role: await assignRole(db, auth, { type: 'user', id: params.userId }, body.role),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/roles/users/{userId}/roles',
    changesAccess: true,
    tag: 'Roles',
    access: 'admin:write',
    summary: "Remove a user's direct role (?role= a built-in name, role bundle id or name)",
    params: userIdParams,
    query: unassignRoleQuery,
    responses: { 204: { description: 'Removed' } },
    handler: ({ db, auth, params, query }) => unassignRole(db, auth, { type: 'user', id: params.userId }, query.role),
  }),
  ...bundleRoutes,
];
