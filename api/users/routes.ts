import { rolesOfUser } from '../../core/auth/store';
import { notFound } from '../../core/errors';
import {
  shapeCUsersWindow,
  shapeCPage,
  shapeCAdminUsersWindow,
  offsetCursor,
  parseOffsetCursor,
} from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import {
  adminUserListQuery,
  adminUserListSchema,
  userDetailSchema,
  userIdParams,
  userListQuery,
  userListSchema,
} from './schemas';
import { getUser, listUsers, listUsersForAdmin } from '../../core/users/store';

export const userRoutes = [
  defineRoute({
    method: 'GET',
    path: '/users',
    tag: 'Users',
    // Emails are personal data: the directory is for those who read the catalog (it names
    // owners by email), not for every automation key.
    access: 'catalog:read',
    summary: 'List users, by email (shape C: first, max, search on email or name; limit and cursor also accepted)',
    query: userListQuery,
    responses: {
      200: {
        description: '`{users, items, page, total, provider}`',
        schema: userListSchema,
        links: linksTo(['GET /users/{id}'], { id: '$response.body#/users/0/id' }).concat(
          linksTo(['POST /roles/users/{userId}/roles', 'DELETE /roles/users/{userId}/roles'], {
            userId: '$response.body#/users/0/id',
          }),
        ),
      },
    },
    handler: async ({ db, query, deps }) => {
      const base = shapeCUsersWindow(query);
      const window = {
        limit: query.limit ?? base.limit,
        offset: query.cursor ? parseOffsetCursor(query.cursor) : base.offset,
      };
      const { users, total } = await listUsers(db, window, query.search);
      const page = shapeCPage(window, users.length, total);
      return {
        users,
        items: users,
        // nextCursor serves callers that page with limit/cursor.
        page: { ...page, nextCursor: page.hasMore ? offsetCursor(window.offset + users.length) : null },
        total,
        provider: deps.config.auth.provider,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/users/{id}',
    tag: 'Users',
    access: 'catalog:read',
    summary:
      'A user with their teams, identity-provider groups (as of their latest sign-in) and roles (direct, through teams and through groups)',
    params: userIdParams,
    responses: { 200: { description: 'UserDetail', schema: userDetailSchema } },
    handler: async ({ db, auth, params }) => {
      const found = await getUser(db, params.id);
      if (!found) throw notFound('User');
      const { user, groups, teams } = found;
      const roles = await rolesOfUser(db, user.id, groups);
      return { ...user, tenant_id: auth.tenantId, teams, groups, roles: roles.map((role) => role.name) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/users',
    tag: 'Users',
    access: 'admin:read',
    summary: 'List users with their direct roles and teams (shape C: 0-based page, pageSize, search)',
    query: adminUserListQuery,
    responses: { 200: { description: '`{items, page, total, provider}`', schema: adminUserListSchema } },
    handler: async ({ db, query, deps }) => {
      const window = shapeCAdminUsersWindow(query);
      const { items, total } = await listUsersForAdmin(db, window, query.search);
      return { items, page: shapeCPage(window, items.length, total), total, provider: deps.config.auth.provider };
    },
  }),
];
