import { changeBundle, createBundle, removeBundle } from '../../core/roles/commands';
import { getBundle, listBundles } from '../../core/roles/store';
import { notFound } from '../../core/errors';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import { dropTeamsCache } from '../teams/cache';
import {
  bundleIdParams,
  bundleSchema,
  bundlesPageSchema,
  createBundleSchema,
  keysetQuery,
  updateBundleSchema,
} from './schemas';

export const bundleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/role-bundles',
    tag: 'Roles',
    access: 'admin:read',
    summary: "The tenant's role bundles (custom roles), by name",
    query: keysetQuery,
    responses: { 200: { description: '`{bundles, next_cursor}`', schema: bundlesPageSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listBundles(db, window), window);
      return { bundles: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/role-bundles',
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Create a role bundle: a named set of permissions (scopes); names are unique per tenant',
    body: createBundleSchema,
    responses: {
      201: {
        description: 'The bundle',
        schema: bundleSchema,
        links: linksTo(
          [
            'GET /admin/role-bundles/{bundleId}',
            'PUT /admin/role-bundles/{bundleId}',
            'DELETE /admin/role-bundles/{bundleId}',
          ],
          { bundleId: '$response.body#/id' },
        ),
      },
    },
    handler: ({ db, auth, body }) => createBundle(db, auth, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/role-bundles/{bundleId}',
    tag: 'Roles',
    access: 'admin:read',
    summary: 'A role bundle',
    params: bundleIdParams,
    responses: { 200: { description: 'The bundle', schema: bundleSchema } },
    handler: async ({ db, params }) => {
      const bundle = await getBundle(db, params.bundleId);
      if (!bundle) throw notFound('Role bundle');
      return bundle;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/role-bundles/{bundleId}',
    changesAccess: true,
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Update a role bundle (partial); holders get the new permissions on their next request',
    params: bundleIdParams,
    body: updateBundleSchema,
    responses: { 200: { description: 'The bundle', schema: bundleSchema } },
    handler: ({ db, auth, params, body }) => changeBundle(db, auth, params.bundleId, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/role-bundles/{bundleId}',
    changesAccess: true,
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Delete a role bundle and, in the same transaction, every assignment of it to users, teams and groups',
    params: bundleIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, deps, params }) => {
      const teamIds = await removeBundle(db, auth, params.bundleId);
      if (teamIds.length) await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
    },
  }),
];
