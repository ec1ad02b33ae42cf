import { listFlags } from '../../core/features/store';
import {
  changeFlag,
  createFlag,
  evaluatedFlags,
  removeFlag,
  removeOverride,
  setOverride,
} from '../../core/features/commands';
import { defineRoute } from '../http/route';
import {
  createFeatureFlagSchema,
  evaluatedFeaturesSchema,
  featureFlagListSchema,
  featureFlagSchema,
  featureFlagWithOverridesSchema,
  flagKeyParams,
  flagOverrideParams,
  flagOverrideResultSchema,
  setOverrideSchema,
  updateFeatureFlagSchema,
} from './schemas';

// Feature flags reach across tenants (a flag's default applies to all of them, an override
// names another tenant), so only a platform operator manages them; every caller reads what
// applies to their own tenant at GET /features. The writes go through the system role
// (core/features/store.ts): no tenant transaction is held.

const TAG = 'Feature flags';
const unknownFlag = { description: 'No feature flag with that key' };

export const featureRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/features',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: 'Every feature flag, by key, with its default and every tenant override',
    responses: { 200: { description: '`{features}`', schema: featureFlagListSchema } },
    handler: async ({ deps }) => ({ features: await listFlags(deps.system) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/features',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: 'Create a feature flag (audited); `enabled` is its default for every tenant without an override',
    body: createFeatureFlagSchema,
    responses: {
      201: { description: 'The flag', schema: featureFlagWithOverridesSchema },
      409: { description: 'A flag with that key exists' },
    },
    handler: ({ deps, auth, body }) => createFlag(deps, auth, body),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/features/{key}',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: "Change a flag's name, description or default (audited); overrides stay",
    params: flagKeyParams,
    body: updateFeatureFlagSchema,
    responses: { 200: { description: 'The flag', schema: featureFlagSchema }, 404: unknownFlag },
    handler: ({ deps, auth, params, body }) => changeFlag(deps, auth, params.key, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/features/{key}',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: 'Delete a flag and its overrides (audited)',
    params: flagKeyParams,
    responses: { 204: { description: 'Deleted' }, 404: unknownFlag },
    handler: ({ deps, auth, params }) => removeFlag(deps, auth, params.key),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/features/{key}/tenants/{tenantId}',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary:
      "Set a tenant's override of a flag (audited): it wins over the flag's default for that tenant. `enabled` defaults to true",
    params: flagOverrideParams,
    optionalBody: true,
    body: setOverrideSchema,
    responses: {
      200: { description: 'The override set', schema: flagOverrideResultSchema },
      404: { description: 'No feature flag with that key, or no such tenant' },
    },
    handler: ({ deps, auth, params, body }) => setOverride(deps, auth, params.key, params.tenantId, body.enabled),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/features/{key}/tenants/{tenantId}',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: "Remove a tenant's override (audited): the flag's default applies to it again",
    params: flagOverrideParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'That tenant has no override of that flag' } },
    handler: ({ deps, auth, params }) => removeOverride(deps, auth, params.key, params.tenantId),
  }),
  defineRoute({
    method: 'GET',
    path: '/features',
    tag: TAG,
    access: 'authenticated',
    summary: "Whether each feature flag is on for the caller's tenant: its override when it has one, else the default",
    responses: { 200: { description: '`{features: {key: on}}`', schema: evaluatedFeaturesSchema } },
    handler: async ({ db }) => ({ features: await evaluatedFlags(db) }),
  }),
];
