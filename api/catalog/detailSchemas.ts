import { AUDIT_STATUSES } from '../../core/audit/types';
import { CHANGELOG_ACTIONS, INVERSE_RELATION_NAMES, LIFECYCLES, RELATION_TYPES } from '../../core/catalog/types';
import { entityRefSchema, teamRefSchema } from './schemas';

// Response schemas of what the catalog knows around one entity (api/catalog/detailRoutes.ts).

export const relationItemSchema = {
  type: 'object',
  required: ['type', 'direction', 'entity'],
  properties: {
    type: {
      type: 'string',
      enum: [...RELATION_TYPES, ...Object.values(INVERSE_RELATION_NAMES)],
      description: 'Outgoing: the stored type; incoming: its inverse name (depends_on ↔ dependency_of, …)',
    },
    direction: { type: 'string', enum: ['outgoing', 'incoming'] },
    entity: entityRefSchema,
  },
  additionalProperties: false,
} as const;

export const changelogSchema = {
  type: 'object',
  required: ['entries'],
  properties: {
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'timestamp', 'action', 'field', 'old_value', 'new_value', 'actor'],
        properties: {
          id: { type: 'string' },
          timestamp: { type: 'string', format: 'date-time' },
          action: { type: 'string', enum: CHANGELOG_ACTIONS },
          field: { type: ['string', 'null'] },
          old_value: { type: ['string', 'null'], description: 'Arrays and objects as JSON' },
          new_value: { type: ['string', 'null'] },
          actor: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const relationListSchema = {
  type: 'object',
  required: ['relations', 'total'],
  properties: {
    relations: { type: 'array', items: relationItemSchema },
    total: { type: 'integer', description: 'Relations at both ends, before the limit' },
  },
  additionalProperties: false,
} as const;

export const topologyQuery = {
  type: 'object',
  properties: { depth: { type: 'integer', minimum: 1, maximum: 5, default: 2 } },
  additionalProperties: false,
} as const;

export const topologySchema = {
  type: 'object',
  required: ['root', 'depth', 'nodes', 'edges', 'truncated'],
  properties: {
    root: { type: 'string', format: 'uuid' },
    depth: { type: 'integer' },
    nodes: {
      type: 'array',
      items: {
        ...entityRefSchema,
        required: [...entityRefSchema.required, 'depth'],
        properties: {
          ...entityRefSchema.properties,
          depth: { type: 'integer', description: 'Relations from the root' },
        },
      },
    },
    edges: {
      type: 'array',
      items: {
        type: 'object',
        required: ['from', 'to', 'type'],
        properties: {
          from: { type: 'string', format: 'uuid' },
          to: { type: 'string', format: 'uuid' },
          type: { type: 'string', enum: RELATION_TYPES },
        },
        additionalProperties: false,
      },
    },
    truncated: { type: 'boolean', description: 'More entities were within reach than the node limit' },
  },
  additionalProperties: false,
} as const;

export const quickActionsSchema = {
  type: 'object',
  required: ['quick_actions'],
  properties: {
    quick_actions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'slug', 'name', 'description', 'category', 'icon'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          slug: { type: 'string', description: 'Run it with POST /forge/molds/{slug}/execute' },
          name: { type: 'string' },
          description: { type: 'string' },
          category: { type: ['string', 'null'] },
          icon: { type: ['string', 'null'] },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const statusSchema = {
  type: 'object',
  required: ['entity', 'lifecycle', 'owner', 'last_activity_at', 'inactive_days'],
  properties: {
    entity: entityRefSchema,
    lifecycle: { type: ['string', 'null'], enum: [...LIFECYCLES, null] },
    owner: {
      type: 'object',
      required: ['value', 'kind', 'teams'],
      properties: {
        value: { type: ['string', 'null'] },
        kind: {
          type: 'string',
          enum: ['team', 'user', 'unknown', 'none'],
          description: "team: a team's slug; user: a user's email; unknown: neither; none: no owner",
        },
        teams: { type: 'array', items: teamRefSchema, description: 'The team, or the user’s teams' },
      },
      additionalProperties: false,
    },
    last_activity_at: { type: 'string', format: 'date-time' },
    inactive_days: { type: 'integer' },
  },
  additionalProperties: false,
} as const;

export const entityActivitySchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kind', 'eventType', 'actor', 'action', 'createdAt'],
        properties: {
          kind: { type: 'string', enum: ['audit', 'changelog'] },
          eventType: {
            type: 'string',
            description: 'entity.created, entity.updated, …; changelog: entity.field_changed',
          },
          actor: { type: 'string' },
          action: { type: 'string' },
          createdAt: { type: 'string', format: 'date-time' },
          status: { type: 'string', enum: AUDIT_STATUSES, description: 'audit entries' },
          field: { type: ['string', 'null'], description: 'changelog entries' },
          old_value: { type: ['string', 'null'] },
          new_value: { type: ['string', 'null'] },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
