import { ENTITY_TYPES, LIFECYCLES, TIERS } from '../../core/catalog/types';
import { teamRefSchema } from './schemas';
import { countsOf } from '../http/countSchemas';

// Response schemas of the catalog statistics (api/catalog/statsRoutes.ts, GET /entities/summary).

/** The spec's Stats; also GET /entities/summary. An unset lifecycle or tier counts as `none`. */
export const statsSchema = {
  type: 'object',
  required: ['total_entities', 'by_type', 'by_lifecycle', 'by_tier'],
  properties: {
    total_entities: { type: 'integer' },
    by_type: countsOf(ENTITY_TYPES),
    by_lifecycle: countsOf([...LIFECYCLES, 'none']),
    by_tier: countsOf([...TIERS, 'none']),
  },
  additionalProperties: false,
} as const;

export const statsTeamsSchema = {
  type: 'object',
  required: ['teams'],
  properties: {
    teams: {
      type: 'array',
      items: {
        ...teamRefSchema,
        required: [...teamRefSchema.required, 'entities'],
        properties: { ...teamRefSchema.properties, entities: { type: 'integer' } },
      },
    },
  },
  additionalProperties: false,
} as const;

export const statsEntityTypesSchema = {
  type: 'object',
  required: ['entity_types'],
  properties: {
    entity_types: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'entities'],
        properties: { type: { type: 'string', enum: ENTITY_TYPES }, entities: { type: 'integer' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const statsLifecycleSchema = {
  type: 'object',
  required: ['lifecycles'],
  properties: {
    lifecycles: {
      type: 'array',
      items: {
        type: 'object',
        required: ['lifecycle', 'entities'],
        properties: { lifecycle: { type: 'string', enum: [...LIFECYCLES, 'none'] }, entities: { type: 'integer' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const statsLanguagesSchema = {
  type: 'object',
  required: ['languages'],
  properties: {
    languages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['language', 'entities'],
        properties: { language: { type: 'string' }, entities: { type: 'integer' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const statsUnownedSchema = {
  type: 'object',
  required: ['unowned', 'unknown_owner', 'by_type'],
  properties: {
    unowned: { type: 'integer', description: 'Entities without an owner' },
    unknown_owner: { type: 'integer', description: 'Entities whose owner is no team slug and no user email' },
    by_type: { ...countsOf(ENTITY_TYPES), description: 'Unowned entities by type' },
  },
  additionalProperties: false,
} as const;
