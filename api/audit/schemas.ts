import { ACTOR_TYPES, AUDIT_STATUSES } from '../../core/audit/types';

export const activityItemSchema = {
  type: 'object',
  required: [
    'eventType',
    'actor',
    'actorType',
    'action',
    'status',
    'errorMessage',
    'targetType',
    'targetId',
    'createdAt',
  ],
  properties: {
    eventType: { type: 'string', description: 'e.g. role.assigned, api_key.created, team.updated' },
    actor: { type: 'string', description: "The user's email, `api-key:<id>` or `agent:<cluster id>`" },
    actorType: { type: 'string', enum: ACTOR_TYPES },
    action: { type: 'string' },
    status: { type: 'string', enum: AUDIT_STATUSES },
    errorMessage: { type: ['string', 'null'], description: 'Why a refused action failed' },
    targetType: { type: ['string', 'null'], description: 'What the action was on, e.g. `team`' },
    targetId: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const activityQuery = {
  type: 'object',
  // Clamped rather than rejected, as the spec says.
  properties: { limit: { type: 'integer', minimum: 1, default: 50 } },
  additionalProperties: false,
} as const;

export const activityListSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: activityItemSchema } },
  additionalProperties: false,
} as const;
