import {
  createCategory,
  createRule,
  readCategories,
  readGrading,
  readRules,
  removeCategory,
  removeRule,
  replaceCategory,
  replaceGrading,
  replaceRule,
} from '../../core/scorecards/configCommands';
import { entityScorecard } from '../../core/scorecards/resultStore';
import { entityRefParams } from '../catalog/schemas';
import { defineRoute } from '../http/route';
import { initiativeRoutes } from './initiativeRoutes';
import {
  categoriesSchema,
  categoryInputSchema,
  categorySchema,
  entityScorecardSchema,
  gradingInputSchema,
  gradingSchema,
  idParams,
  ruleInputSchema,
  rulesSchema,
  ruleSchema,
} from './schemas';

// Scorecard configuration (admin:read to read, admin:write to change) and an entity's result
// (catalog:read). Every change re-scores the tenant's entities in the background.

const TAG = 'Scorecards';
const invalidResponse = { description: 'The body is invalid (a bad check names the field and its kind)' };
const categoryNotFound = { description: 'No such category in this tenant' };
const ruleNotFound = { description: 'No such rule in this tenant' };

export const scorecardRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/scorecards/categories',
    tag: TAG,
    access: 'admin:read',
    summary: "The tenant's scorecard categories, oldest first (a new tenant's default set on first read)",
    responses: { 200: { description: 'ScorecardCategory[]', schema: categoriesSchema } },
    handler: ({ db, auth }) => readCategories(db, auth),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/scorecards/categories',
    tag: TAG,
    access: 'admin:write',
    summary: 'Adds a category (audited); every entity is scored again',
    body: categoryInputSchema,
    responses: {
      201: { description: 'The category', schema: categorySchema },
      400: { description: 'The body is invalid, or the tenant is at its category limit' },
      409: { description: 'A category of that name exists' },
    },
    handler: ({ db, auth, body, deps }) => createCategory(db, auth, body, deps.config.scorecards),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/scorecards/categories/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Replaces a category (audited); every entity is scored again',
    params: idParams,
    body: categoryInputSchema,
    responses: {
      200: { description: 'The category', schema: categorySchema },
      404: categoryNotFound,
      409: { description: 'Another category has that name' },
    },
    handler: ({ db, auth, params, body }) => replaceCategory(db, auth, params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/scorecards/categories/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Deletes a category without rules (audited); one that still has rules is a 409',
    params: idParams,
    responses: {
      204: { description: 'Deleted' },
      404: categoryNotFound,
      409: { description: 'The category still has rules' },
    },
    handler: ({ db, auth, params }) => removeCategory(db, auth, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/scorecards/rules',
    tag: TAG,
    access: 'admin:read',
    summary: "The tenant's scorecard rules with their checks, oldest first",
    responses: { 200: { description: 'ScorecardRule[]', schema: rulesSchema } },
    handler: ({ db, auth }) => readRules(db, auth),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/scorecards/rules',
    tag: TAG,
    access: 'admin:write',
    summary: 'Adds a rule (audited); every entity is scored again. The check is data in the check language',
    body: ruleInputSchema,
    responses: {
      201: { description: 'The rule', schema: ruleSchema },
      400: invalidResponse,
      409: { description: 'A rule of that name exists' },
    },
    handler: ({ db, auth, body, deps }) => createRule(db, auth, body, deps.config.scorecards),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/scorecards/rules/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Replaces a rule (audited); every entity is scored again',
    params: idParams,
    body: ruleInputSchema,
    responses: {
      200: { description: 'The rule', schema: ruleSchema },
      400: invalidResponse,
      404: ruleNotFound,
      409: { description: 'Another rule has that name' },
    },
    handler: ({ db, auth, params, body }) => replaceRule(db, auth, params.id, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/scorecards/rules/{id}',
    tag: TAG,
    access: 'admin:write',
    summary: 'Deletes a rule (audited); every entity is scored again',
    params: idParams,
    responses: { 204: { description: 'Deleted' }, 404: ruleNotFound },
    handler: ({ db, auth, params }) => removeRule(db, auth, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/scorecards/grading',
    tag: TAG,
    access: 'admin:read',
    summary: "The tenant's grading thresholds",
    responses: { 200: { description: 'Grading thresholds', schema: gradingSchema } },
    handler: ({ db, auth }) => readGrading(db, auth),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/scorecards/grading',
    tag: TAG,
    access: 'admin:write',
    summary:
      'Replaces the grading thresholds (audited; strictly decreasing from a_plus to d); every entity is graded again',
    body: gradingInputSchema,
    responses: {
      200: { description: 'Grading thresholds', schema: gradingSchema },
      400: { description: 'A threshold is out of 0-100 or not below the one above it' },
    },
    handler: ({ db, auth, body }) => replaceGrading(db, auth, body),
  }),
  ...initiativeRoutes,
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/scorecard',
    tag: TAG,
    access: 'catalog:read',
    summary:
      "The entity's latest scorecard: category scores, total, grade, each rule's pass or fail with the reason; `pending` before its first scoring",
    params: entityRefParams,
    responses: {
      200: { description: 'EntityScorecard', schema: entityScorecardSchema },
      404: { description: 'No such entity in this tenant' },
    },
    handler: ({ db, params }) => entityScorecard(db, params.id),
  }),
];
