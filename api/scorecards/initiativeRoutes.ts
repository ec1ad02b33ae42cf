import {
  createInitiative,
  readInitiative,
  removeInitiative,
  replaceInitiative,
} from '../../core/scorecards/initiativeCommands';
import { listInitiatives } from '../../core/scorecards/initiativeStore';
import { defineRoute } from '../http/route';
import {
  idParams,
  initiativeInputSchema,
  initiativeProgressSchema,
  initiativeSchema,
  initiativesSchema,
  progressQuery,
} from './schemas';

// Initiatives: rules a set of entities should pass by a date (admin:read / admin:write, as the
// rest of /admin/scorecards). Past the date, the platform opens governance actions.

const TAG = 'Scorecards';
const notFoundResponse = { description: 'No such initiative in this tenant' };

export const initiativeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/scorecards/initiatives',
    tag: TAG,
    access: 'admin:read',
    summary: "The tenant's initiatives, oldest first",
    responses: { 200: { description: 'Initiative[]', schema: initiativesSchema } },
    handler: ({ db }) => listInitiatives(db),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/scorecards/initiatives',
    tag: TAG,
    access: 'admin:write',
    summary: 'Adds an initiative (audited): rules, an entity filter and a target date',
    body: initiativeInputSchema,
    responses: {
      201: { description: 'The initiative', schema: initiativeSchema },
      400: {
        description: 'The body is invalid, a rule id is not a rule of this tenant, or the tenant is at its limit',
      },
    },
    handler: ({ db, auth, body, deps }) => createInitiative(db, auth, body, deps.config.scorecards.maxInitiatives),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/scorecards/initiatives/{id}',
    tag: TAG,
    access: 'admin:read',
    summary:
      'The initiative with its progress: entities passing overall and per owning team, and a page of its entities',
    params: idParams,
    query: progressQuery,
    responses: {
      200: { description: 'Initiative with progress', schema: initiativeProgressSchema },
      404: notFoundResponse,
    },
    handler: ({ db, params, query }) => readInitiative(db, params.id, query),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/scorecards/initiatives/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Replaces an initiative (audited); a new target date opens its actions again when it passes',
    params: idParams,
    body: initiativeInputSchema,
    responses: {
      200: { description: 'The initiative', schema: initiativeSchema },
      400: { description: 'The body is invalid, or a rule id is not a rule of this tenant' },
      404: notFoundResponse,
    },
    handler: ({ db, auth, params, body }) => replaceInitiative(db, auth, params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/scorecards/initiatives/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Deletes an initiative (audited); governance actions it opened stay',
    params: idParams,
    responses: { 204: { description: 'Deleted' }, 404: notFoundResponse },
    handler: ({ db, auth, params }) => removeInitiative(db, auth, params.id),
  }),
];
