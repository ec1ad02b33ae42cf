import { entitiesPerTeam } from '../../core/catalog/ownerStore';
import { entitiesPerLanguage, entityCounts, unownedCounts } from '../../core/catalog/statsStore';
import { ENTITY_TYPES, LIFECYCLES } from '../../core/catalog/types';
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import { aggregateLimitedResponse } from '../http/aggregateReads';
import { defineRoute } from '../http/route';
import {
  statsEntityTypesSchema,
  statsLanguagesSchema,
  statsLifecycleSchema,
  statsSchema,
  statsTeamsSchema,
  statsUnownedSchema,
} from './statsSchemas';

// Catalog statistics, computed from the live tables, through the process's bounded aggregate
// reads (api/http/aggregateReads.ts): a tenant's answer is cached a while and shared by
// concurrent callers. No transaction is held unless a query runs.

/** Counts by type, lifecycle and tier: one cached query behind /stats, its parts and /entities/summary. */
export const cachedEntityCounts = (
  deps: AppDeps,
  tenantId: string,
  inTenant: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>,
) => deps.aggregates.read(tenantId, 'entity-counts', () => inTenant(entityCounts));

export const statsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/stats',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary: 'Entity totals by type, lifecycle and tier (every value, zeros included; unset as `none`)',
    responses: {
      200: { description: '`{total_entities, by_type, by_lifecycle, by_tier}`', schema: statsSchema },
      ...aggregateLimitedResponse,
    },
    handler: ({ auth, deps, inTenant }) => cachedEntityCounts(deps, auth.tenantId, inTenant),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/entity-types',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary: 'Entities per type, every type, most first',
    responses: {
      200: { description: '`{entity_types}`', schema: statsEntityTypesSchema },
      ...aggregateLimitedResponse,
    },
    handler: async ({ auth, deps, inTenant }) => {
      const { by_type } = await cachedEntityCounts(deps, auth.tenantId, inTenant);
      const entity_types = ENTITY_TYPES.map((type) => ({ type, entities: by_type[type] }));
      return { entity_types: entity_types.sort((a, b) => b.entities - a.entities) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/languages',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      'Entities per language, most first. A language is read from an entity’s tags of the form `lang:<language>` (lowercased), until repositories report theirs',
    responses: { 200: { description: '`{languages}`', schema: statsLanguagesSchema }, ...aggregateLimitedResponse },
    handler: async ({ auth, deps, inTenant }) => ({
      languages: await deps.aggregates.read(auth.tenantId, 'languages', () => inTenant(entitiesPerLanguage)),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/lifecycle',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary: 'Entities per lifecycle, in lifecycle order, then those without one (`none`)',
    responses: { 200: { description: '`{lifecycles}`', schema: statsLifecycleSchema }, ...aggregateLimitedResponse },
    handler: async ({ auth, deps, inTenant }) => {
      const { by_lifecycle } = await cachedEntityCounts(deps, auth.tenantId, inTenant);
      return {
        lifecycles: [...LIFECYCLES, 'none' as const].map((lifecycle) => ({
          lifecycle,
          entities: by_lifecycle[lifecycle],
        })),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/teams',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      'Entities per team, every team, most first. A team owns the entities whose owner is its slug or one of its members’ emails',
    responses: { 200: { description: '`{teams}`', schema: statsTeamsSchema }, ...aggregateLimitedResponse },
    handler: async ({ auth, deps, inTenant }) => ({
      teams: await deps.aggregates.read(auth.tenantId, 'teams', () => inTenant(entitiesPerTeam)),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/unowned',
    tag: 'Catalog',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      'Entities without an owner (by type), and those whose owner names no team (slug) and no user (email) of the tenant',
    responses: {
      200: { description: '`{unowned, unknown_owner, by_type}`', schema: statsUnownedSchema },
      ...aggregateLimitedResponse,
    },
    handler: ({ auth, deps, inTenant }) =>
      deps.aggregates.read(auth.tenantId, 'unowned', () => inTenant(unownedCounts)),
  }),
];
