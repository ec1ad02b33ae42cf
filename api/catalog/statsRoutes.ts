import { entitiesPerTeam } from '../../core/catalog/ownerStore';
import { entitiesPerLanguage, entityCounts, unownedCounts } from '../../core/catalog/statsStore';
import { ENTITY_TYPES, LIFECYCLES } from '../../core/catalog/types';
import { defineRoute } from '../http/route';
import {
  statsEntityTypesSchema,
  statsLanguagesSchema,
  statsLifecycleSchema,
  statsSchema,
  statsTeamsSchema,
  statsUnownedSchema,
} from './statsSchemas';

// Catalog statistics, computed from the live tables on each call.

export const statsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/stats',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'Entity totals by type, lifecycle and tier (every value, zeros included; unset as `none`)',
    responses: { 200: { description: '`{total_entities, by_type, by_lifecycle, by_tier}`', schema: statsSchema } },
    handler: ({ db }) => entityCounts(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/entity-types',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'Entities per type, every type, most first',
    responses: { 200: { description: '`{entity_types}`', schema: statsEntityTypesSchema } },
    handler: async ({ db }) => {
      const { by_type } = await entityCounts(db);
      const entity_types = ENTITY_TYPES.map((type) => ({ type, entities: by_type[type] }));
      return { entity_types: entity_types.sort((a, b) => b.entities - a.entities) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/languages',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'Entities per language, most first. A language is read from an entity’s tags of the form `lang:<language>` (lowercased), until repositories report theirs',
    responses: { 200: { description: '`{languages}`', schema: statsLanguagesSchema } },
    handler: async ({ db }) => ({ languages: await entitiesPerLanguage(db) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/lifecycle',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'Entities per lifecycle, in lifecycle order, then those without one (`none`)',
    responses: { 200: { description: '`{lifecycles}`', schema: statsLifecycleSchema } },
    handler: async ({ db }) => {
      const { by_lifecycle } = await entityCounts(db);
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
    summary:
      'Entities per team, every team, most first. A team owns the entities whose owner is its slug or one of its members’ emails',
    responses: { 200: { description: '`{teams}`', schema: statsTeamsSchema } },
    handler: async ({ db }) => ({ teams: await entitiesPerTeam(db) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/stats/unowned',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'Entities without an owner (by type), and those whose owner names no team (slug) and no user (email) of the tenant',
    responses: { 200: { description: '`{unowned, unknown_owner, by_type}`', schema: statsUnownedSchema } },
    handler: ({ db }) => unownedCounts(db),
  }),
];
