import { entityIdOf } from '../../core/catalog/entityStore';
import { invalid, notFound } from '../../core/errors';
import { bulkUpdateStatus, changeAction, createAction, deleteAction } from '../../core/governance/actionCommands';
import { filtersConflictingWithClosed } from '../../core/governance/actionRules';
import { getAction, governanceDashboard, listActions } from '../../core/governance/actionStore';
import { documentationCoverage } from '../../core/governance/documentationStore';
import type { ActionFilter } from '../../core/governance/types';
import type { OffsetWindow } from '../../core/paging';
import { entityRefParams } from '../catalog/schemas';
import { limitOffsetWindow, offsetCursor } from '../http/pagination';
import { defineRoute } from '../http/route';
import type { Knex } from 'knex';
import {
  actionIdParams,
  actionListQuery,
  actionListSchema,
  actionSchema,
  bulkResultSchema,
  bulkStatusSchema,
  createActionSchema,
  dashboardSchema,
  documentationSchema,
  entityActionListQuery,
  updateActionSchema,
} from './schemas';

// Governance actions (docs/governance.md): the list and the entity's list, create, read, update,
// soft delete, bulk status updates, the dashboard and documentation coverage.

const TAG = 'Governance';

const conflictingFilters = {
  400: {
    description:
      'A query value out of range, a cursor that is not a stringified offset, or closed=true with a filter matching only active actions (status=open or in_progress, actionable=true, overdue=true)',
  },
};

/** One page of the filtered actions, with the limit/offset metadata. */
async function actionPage(db: Knex, query: ActionFilter & { limit: number; offset: number; cursor?: string }) {
  const { limit, offset, cursor, ...filter } = query;
  const conflicts = filtersConflictingWithClosed(filter);
  if (conflicts.length > 0) {
    const named = conflicts.map(({ name, value }) => `${name}=${value}`).join(', ');
    throw invalid(`closed=true (final actions only) cannot be combined with ${named} (active actions only)`, [
      { field: 'query.closed', message: 'true matches only resolved, dismissed and wont_fix actions' },
      ...conflicts.map(({ name, value }) => ({
        field: `query.${name}`,
        message: `${value} matches only active actions`,
      })),
    ]);
  }
  const window: OffsetWindow = limitOffsetWindow({ limit, offset, cursor });
  const { actions, total, summary } = await listActions(db, filter, window);
  const next = window.offset + window.limit;
  return {
    actions,
    total,
    summary,
    limit: window.limit,
    offset: window.offset,
    next_cursor: next < total ? offsetCursor(next) : null,
  };
}

async function requireAction(db: Knex, id: string) {
  const action = await getAction(db, id);
  if (!action) throw notFound('Governance action');
  return action;
}

export const governanceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/governance/dashboard',
    tag: TAG,
    access: 'catalog:read',
    summary: 'Counts of the live (not deleted) actions: total, by status, by priority, overdue and unassigned',
    responses: { 200: { description: 'The dashboard', schema: dashboardSchema } },
    handler: ({ db }) => governanceDashboard(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/governance/documentation',
    tag: TAG,
    access: 'catalog:read',
    summary:
      'Documentation coverage (entities with a README of their own or a link to a crawled repository) and freshness of the documented entities by their last change',
    responses: { 200: { description: 'Coverage and freshness', schema: documentationSchema } },
    handler: ({ db }) => documentationCoverage(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/governance/actions',
    tag: TAG,
    access: 'catalog:read',
    summary:
      'List actions, newest first, filtered before paging; limit/offset (default 50, at most 200), or `cursor` (a stringified offset); `total` and `summary` count the filtered set',
    query: actionListQuery,
    responses: {
      200: { description: '`{actions, total, summary, limit, offset, next_cursor}`', schema: actionListSchema },
      ...conflictingFilters,
    },
    handler: ({ db, query }) => actionPage(db, query),
  }),
  defineRoute({
    method: 'POST',
    path: '/governance/actions',
    tag: TAG,
    access: 'catalog:write',
    summary: 'Create an action (open; created_by the caller)',
    body: createActionSchema,
    responses: {
      201: {
        description: 'The action',
        schema: actionSchema,
        links: [{ to: 'GET /governance/actions/{id}', parameters: { id: '$response.body#/id' } }],
      },
      400: { description: 'The body does not match, or entity_id names no entity of the tenant' },
    },
    handler: async ({ db, auth, body }) => (await createAction(db, auth, body)).action!,
  }),
  defineRoute({
    method: 'POST',
    path: '/governance/actions/bulk',
    tag: TAG,
    access: 'catalog:write',
    summary: `Set the status of up to 200 actions; actions already final, deleted, unknown or of another tenant are skipped`,
    body: bulkStatusSchema,
    responses: { 200: { description: '`{requested, updated}`', schema: bulkResultSchema } },
    handler: ({ db, auth, body }) => bulkUpdateStatus(db, auth, body.ids, body.status),
  }),
  defineRoute({
    method: 'GET',
    path: '/governance/actions/{id}',
    tag: TAG,
    access: 'catalog:read',
    summary: 'An action (404 once deleted)',
    params: actionIdParams,
    responses: { 200: { description: 'The action', schema: actionSchema } },
    handler: ({ db, params }) => requireAction(db, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/governance/actions/{id}',
    tag: TAG,
    access: 'catalog:write',
    summary:
      'Update status, priority, assigned_to, resolution_notes or due_date. A non-final action may take any status; a final one (resolved, dismissed, wont_fix) may be reopened (open, in_progress) but not moved to another final status',
    params: actionIdParams,
    body: updateActionSchema,
    responses: {
      200: { description: 'The action', schema: actionSchema },
      409: { description: 'A move from one final status to another' },
    },
    handler: ({ db, auth, params, body }) => changeAction(db, auth, params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/governance/actions/{id}',
    tag: TAG,
    access: 'catalog:write',
    summary: 'Soft-delete an action: it leaves every list, read and count; a second delete is a 404',
    params: actionIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: ({ db, auth, params }) => deleteAction(db, auth, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/governance/actions',
    tag: TAG,
    access: 'catalog:read',
    summary: 'The entity’s actions, with the filters and paging of /governance/actions',
    params: entityRefParams,
    query: entityActionListQuery,
    responses: {
      200: { description: '`{actions, total, summary, limit, offset, next_cursor}`', schema: actionListSchema },
      ...conflictingFilters,
    },
    handler: async ({ db, params, query }) => {
      const entityId = await entityIdOf(db, params.id);
      if (!entityId) throw notFound('Entity');
      return actionPage(db, { ...query, entity_id: entityId });
    },
  }),
];
