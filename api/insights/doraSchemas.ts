import { DORA_BANDS, DORA_WINDOWS } from '../../core/insights/doraRules';
import { DORA_REASONS } from '../../core/insights/doraReport';

// GET /insights/dora (docs/insights.md, DORA metrics): the query and the four metrics.

export const doraQuery = {
  type: 'object',
  properties: {
    entity_id: { type: 'string', minLength: 1, maxLength: 63, description: 'An entity’s id or service_id' },
    team_id: { type: 'string', minLength: 1, maxLength: 100, description: 'A team’s id or slug: the entities it owns' },
    window: { type: 'string', enum: DORA_WINDOWS, default: '30d' },
  },
  additionalProperties: false,
} as const;

const metricSchema = {
  type: 'object',
  required: ['value', 'unit', 'band', 'reason', 'sources'],
  properties: {
    value: { type: ['number', 'null'], description: 'null when the reason says why it cannot be measured' },
    unit: { type: 'string', enum: ['deployments_per_day', 'hours', 'percent'] },
    band: { type: ['string', 'null'], enum: [...DORA_BANDS, null] },
    reason: {
      type: ['object', 'null'],
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(DORA_REASONS) },
        message: { type: 'string' },
      },
      additionalProperties: false,
    },
    sources: {
      type: 'object',
      description: 'What the figure was computed from: counts, and the settings that shaped it',
      additionalProperties: { type: ['number', 'boolean'] },
    },
  },
  additionalProperties: false,
} as const;

export const doraSchema = {
  type: 'object',
  required: [
    'scope',
    'window',
    'from',
    'to',
    'deployment_frequency',
    'lead_time_for_changes',
    'change_failure_rate',
    'time_to_restore_service',
  ],
  properties: {
    scope: {
      type: 'object',
      required: ['kind', 'id'],
      properties: {
        kind: { type: 'string', enum: ['tenant', 'entity', 'team'] },
        id: { type: ['string', 'null'], description: 'The entity’s or team’s id; null for the tenant' },
      },
      additionalProperties: false,
    },
    window: { type: 'string', enum: DORA_WINDOWS },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    deployment_frequency: metricSchema,
    lead_time_for_changes: metricSchema,
    change_failure_rate: metricSchema,
    time_to_restore_service: metricSchema,
  },
  additionalProperties: false,
} as const;
