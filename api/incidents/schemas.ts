import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, INCIDENT_URGENCIES } from '../../core/incidents/types';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';

// The incidents and on-call of an entity, as incident-tool-a syncs bring them (docs/integrations.md).

const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const nullableText = { type: ['string', 'null'] } as const;

export const incidentSchema = {
  type: 'object',
  required: [
    'id',
    'integration_id',
    'external_id',
    'service_id',
    'title',
    'status',
    'urgency',
    'severity',
    'url',
    'opened_at',
    'resolved_at',
    'synced_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    integration_id: { type: 'string', format: 'uuid' },
    external_id: { type: 'string', description: "The incident's id in the tool" },
    service_id: { type: 'string', description: "The tool's service the entity is tagged with" },
    title: { type: 'string' },
    status: { type: 'string', enum: INCIDENT_STATUSES },
    urgency: { type: ['string', 'null'], enum: [...INCIDENT_URGENCIES, null] },
    severity: { type: ['string', 'null'], enum: [...INCIDENT_SEVERITIES, null] },
    url: nullableText,
    opened_at: { type: 'string', format: 'date-time' },
    resolved_at: nullableTime,
    synced_at: { type: 'string', format: 'date-time', description: 'When a sync last wrote it' },
  },
  additionalProperties: false,
} as const;

export const incidentsPageSchema = keysetPageSchema('incidents', incidentSchema);

export const incidentsQuery = {
  type: 'object',
  properties: { ...keysetListQuery(), status: { type: 'string', enum: INCIDENT_STATUSES } },
  additionalProperties: false,
} as const;

/** On-call entries one answer carries at most. */
export const ONCALL_MAX = 200;

export const oncallSchema = {
  type: 'object',
  required: ['oncall'],
  properties: {
    oncall: {
      type: 'array',
      maxItems: ONCALL_MAX,
      items: {
        type: 'object',
        required: [
          'integration_id',
          'service_id',
          'escalation_policy',
          'schedule',
          'level',
          'user_name',
          'user_email',
          'starts_at',
          'ends_at',
          'synced_at',
        ],
        properties: {
          integration_id: { type: 'string', format: 'uuid' },
          service_id: { type: 'string' },
          escalation_policy: nullableText,
          schedule: nullableText,
          level: { type: 'integer', minimum: 1, description: 'Escalation level: 1 is paged first' },
          user_name: { type: 'string' },
          user_email: nullableText,
          starts_at: nullableTime,
          ends_at: nullableTime,
          synced_at: { type: 'string', format: 'date-time' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
