import {
  ENTITY_SOURCES,
  ENTITY_VIEW_FIELDS,
  ENTITY_TYPES,
  LIFECYCLES,
  MANIFEST_TYPES,
  TIERS,
} from '../../core/catalog/types';
import {
  ENTITY_DESCRIPTION_SCHEMA,
  ENTITY_LINK_SCHEMA,
  ENTITY_LINKS_SCHEMA,
  ENTITY_NAME_SCHEMA,
  ENTITY_OWNER_SCHEMA,
  ENTITY_TAGS_SCHEMA,
  MAX_RELATIONS,
  README_SCHEMA,
  RELATION_INPUT_SCHEMA,
  SERVICE_ID_SCHEMA,
} from '../../core/catalog/fieldSchemas';
import { shapeAQuery } from '../http/pagination';
import { shapeAPageSchema } from '../teams/schemas';

// The catalog's request and response schemas. `entitySchema` is the spec's Entity, declared once.

const name = ENTITY_NAME_SCHEMA;
const description = ENTITY_DESCRIPTION_SCHEMA;
const owner = ENTITY_OWNER_SCHEMA;
const lifecycle = { type: ['string', 'null'], enum: [...LIFECYCLES, null] } as const;
const tier = { type: ['string', 'null'], enum: [...TIERS, null] } as const;
const tags = ENTITY_TAGS_SCHEMA;
export const entityLinkSchema = ENTITY_LINK_SCHEMA;

export const entitySchema = {
  type: 'object',
  required: ENTITY_VIEW_FIELDS,
  properties: {
    id: { type: 'string', format: 'uuid' },
    service_id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ENTITY_TYPES },
    lifecycle: { type: ['string', 'null'], enum: [...LIFECYCLES, null] },
    owner: { type: ['string', 'null'] },
    description: { type: ['string', 'null'] },
    tier: { type: ['string', 'null'], enum: [...TIERS, null] },
    tags: { type: 'array', items: { type: 'string' } },
    links: { type: 'array', items: entityLinkSchema },
    source: { type: 'string', enum: ENTITY_SOURCES },
    last_activity_at: {
      type: 'string',
      format: 'date-time',
      description: 'The last write to the entity (what zombies are measured by)',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const readmeSchema = README_SCHEMA;
export const relationInputSchema = RELATION_INPUT_SCHEMA;

export const createEntitySchema = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    service_id: SERVICE_ID_SCHEMA,
    name,
    type: { type: 'string', enum: ENTITY_TYPES },
    lifecycle,
    owner,
    description,
    tier,
    tags,
    links: ENTITY_LINKS_SCHEMA,
    relations: { type: 'array', items: RELATION_INPUT_SCHEMA, maxItems: MAX_RELATIONS },
    readme: { anyOf: [readmeSchema, { type: 'null' }] },
  },
  additionalProperties: false,
} as const;

/** The spec's EntityUpdate: only these fields; null clears a nullable one. */
export const updateEntitySchema = {
  type: 'object',
  minProperties: 1,
  properties: { name, description, owner, lifecycle, tier, tags },
  additionalProperties: false,
} as const;

export const entityRefParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 63, description: 'The entity id or service_id' } },
  additionalProperties: false,
} as const;

/** An entity in a list: every field, or those `fields=` names (always with its id). */
export const entityListItemSchema = { ...entitySchema, required: ['id'] } as const;

/** The entity list's `pagination` (api/http/pagination.ts `ShapeAEntityPagination`). */
const entityPaginationSchema = {
  type: 'object',
  required: ['total', 'page', 'pageSize', 'nextCursor'],
  properties: {
    total: { type: 'integer' },
    page: { type: 'integer', description: '1-based, as counted while paging with the cursors' },
    pageSize: { type: 'integer' },
    nextCursor: { type: ['string', 'null'] },
  },
  additionalProperties: false,
} as const;

export const entityListQuery = {
  type: 'object',
  properties: {
    ...shapeAQuery(),
    type: { type: 'string', enum: ENTITY_TYPES },
    lifecycle: { type: 'string', enum: LIFECYCLES },
    owner: { type: 'string', minLength: 1, maxLength: 320 },
    team: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: "A team's slug or id: entities it or its members own",
    },
    tier: { type: 'string', enum: TIERS },
    tags: { type: 'string', minLength: 1, maxLength: 1000, description: 'Comma-separated; entities with all of them' },
    search: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'A prefix of the name or the service_id, in any case',
    },
    source: { type: 'string', enum: ENTITY_SOURCES },
    manifestType: { type: 'string', enum: MANIFEST_TYPES, description: 'Entities whose manifest has this format' },
    hasRelations: { type: 'boolean', description: 'With (true) or without (false) any relation, either direction' },
    grade: {
      type: 'string',
      minLength: 1,
      maxLength: 40,
      description: 'Comma-separated scorecard grades (A+ written A%2B); entities whose latest grade is one of them',
    },
    bus_factor: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      description:
        'Entities whose bus factor (over the default 90-day window, kept since the last crawl of their repositories) is this',
    },
    fields: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: `Comma-separated fields to return (id is always returned): ${ENTITY_VIEW_FIELDS.join(', ')}`,
    },
  },
  additionalProperties: false,
} as const;

export const entityListSchema = {
  type: 'object',
  required: ['entities', 'page', 'pagination'],
  properties: {
    entities: { type: 'array', items: entityListItemSchema },
    page: shapeAPageSchema,
    pagination: entityPaginationSchema,
  },
  additionalProperties: false,
} as const;

export const zombieQuery = {
  type: 'object',
  properties: {
    ...shapeAQuery(200),
    inactiveDays: { type: 'integer', minimum: 1, maximum: 36500, default: 90, description: 'Days without a write' },
    minAge: { type: 'integer', minimum: 0, maximum: 36500, default: 0, description: 'Days since creation, at least' },
    lifecycle: { type: 'string', enum: LIFECYCLES },
    type: { type: 'string', enum: ENTITY_TYPES },
  },
  additionalProperties: false,
} as const;

export const zombieListSchema = {
  type: 'object',
  required: ['entities', 'page'],
  properties: {
    entities: {
      type: 'array',
      items: {
        ...entitySchema,
        required: [...entitySchema.required, 'inactive_days'],
        properties: { ...entitySchema.properties, inactive_days: { type: 'integer' } },
      },
    },
    page: shapeAPageSchema,
  },
  additionalProperties: false,
} as const;

/** An entity as a relation, topology node or status names it. */
export const entityRefSchema = {
  type: 'object',
  required: ['id', 'service_id', 'name', 'type'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    service_id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ENTITY_TYPES },
  },
  additionalProperties: false,
} as const;

export const teamRefSchema = {
  type: 'object',
  required: ['id', 'slug', 'name'],
  properties: { id: { type: 'string', format: 'uuid' }, slug: { type: 'string' }, name: { type: 'string' } },
  additionalProperties: false,
} as const;
