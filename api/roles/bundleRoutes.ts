import type { Knex } from 'knex';
import { recordAudit, RefusedAction, type AuditEvent } from '../../core/audit/store';
import { conflict, invalid, notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { dropTeamsCache } from '../teams/cache';
import { recordTeamAudits } from '../../core/teams/store';
import { bundleIdParams, bundleSchema, createBundleSchema, updateBundleSchema } from './schemas';
import { UUID } from '../../core/ids';
import {
  deleteBundle,
  getBundle,
  insertBundle,
  isReservedRoleName,
  isUniqueViolation,
  listBundles,
  updateBundle,
} from '../../core/roles/store';

/** 400 for a uuid-shaped name, which would read as a bundle id. */
function checkNameShape(name: string | undefined): void {
  if (name !== undefined && UUID.test(name)) {
    throw invalid('A role bundle name must not look like a uuid', [
      { field: 'body.name', message: 'looks like a uuid' },
    ]);
  }
}

const nameTaken = (name: string) => `A role bundle named "${name}" already exists`;

/**
 * A 409 refusal (audited as a failure of `event`) when `name` is a built-in role's or another
 * bundle's name.
 */
async function requireFreeName(
  db: Knex,
  name: string | undefined,
  event: AuditEvent,
  exceptId?: string,
): Promise<void> {
  if (name === undefined) return;
  if (isReservedRoleName(name)) throw new RefusedAction(conflict(`"${name}" is a built-in role name`), event);
  const taken = await db('role_bundles')
    .where({ name })
    .modify((q) => exceptId && q.whereNot({ id: exceptId }))
    .first('id');
  if (taken) throw new RefusedAction(conflict(nameTaken(name)), event);
}

export const bundleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/role-bundles',
    tag: 'Roles',
    access: 'admin:read',
    summary: "The tenant's role bundles (custom roles)",
    responses: {
      200: {
        description: '`{bundles}`',
        schema: { type: 'object', properties: { bundles: { type: 'array', items: bundleSchema } } },
      },
    },
    handler: async ({ db }) => ({ bundles: await listBundles(db) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/role-bundles',
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Create a role bundle: a named set of permissions (scopes); names are unique per tenant',
    body: createBundleSchema,
    responses: { 201: { description: 'The bundle', schema: bundleSchema } },
    handler: async ({ db, auth, body }) => {
      checkNameShape(body.name);
      const event = {
        eventType: 'role_bundle.created',
        action: 'create',
        targetType: 'role_bundle',
        metadata: { name: body.name, permissions: body.permissions },
      };
      await requireFreeName(db, body.name, event);
      // Null when a concurrent request took the name since the check.
      const bundle = await insertBundle(db, auth.tenantId, body);
      if (!bundle) throw new RefusedAction(conflict(nameTaken(body.name)), event);
      await recordAudit(db, auth, {
        ...event,
        targetId: bundle.id,
        metadata: { name: bundle.name, permissions: bundle.permissions },
      });
      return bundle;
    },
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
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Update a role bundle (partial); holders get the new permissions on their next request',
    params: bundleIdParams,
    body: updateBundleSchema,
    responses: { 200: { description: 'The bundle', schema: bundleSchema } },
    handler: async ({ db, auth, params, body }) => {
      if (!(await getBundle(db, params.bundleId))) throw notFound('Role bundle');
      checkNameShape(body.name);
      const event = {
        eventType: 'role_bundle.updated',
        action: 'update',
        targetType: 'role_bundle',
        targetId: params.bundleId,
        metadata: { fields: Object.keys(body) },
      };
      await requireFreeName(db, body.name, event, params.bundleId);
      const bundle = await updateBundle(db, params.bundleId, body).catch((err) => {
        // A concurrent request took the name between the check and the update.
        throw isUniqueViolation(err) ? new RefusedAction(conflict(nameTaken(body.name!)), event) : err;
      });
      if (!bundle) throw notFound('Role bundle');
      await recordAudit(db, auth, {
        ...event,
        metadata: { ...event.metadata, name: bundle.name, permissions: bundle.permissions },
      });
      return bundle;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/role-bundles/{bundleId}',
    tag: 'Roles',
    access: 'admin:write',
    summary: 'Delete a role bundle and, in the same transaction, every assignment of it to users, teams and groups',
    params: bundleIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, deps, params }) => {
      const removed = await deleteBundle(db, params.bundleId);
      if (!removed) throw notFound('Role bundle');
      await recordAudit(db, auth, {
        eventType: 'role_bundle.deleted',
        action: 'delete',
        targetType: 'role_bundle',
        targetId: params.bundleId,
        metadata: {
          name: removed.name,
          user_assignments: removed.users,
          team_assignments: removed.teamIds.length,
          group_assignments: removed.groups,
        },
      });
      if (removed.teamIds.length) {
        await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
        await recordTeamAudits(db, auth, removed.teamIds, {
          eventType: 'team.role_unassigned',
          action: 'unassign_role',
          metadata: { role: params.bundleId, role_name: removed.name, reason: 'role bundle deleted' },
        });
      }
    },
  }),
];
