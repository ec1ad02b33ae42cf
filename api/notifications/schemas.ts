import { NOTIFICATION_KINDS } from '../../core/notifications/types';
import { keysetListQuery } from '../http/pagination';

export const notificationSchema = {
  type: 'object',
  required: ['id', 'kind', 'title', 'payload', 'read_at', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    kind: { type: 'string', enum: NOTIFICATION_KINDS },
    title: { type: 'string' },
    payload: {
      type: 'object',
      description: 'What it is about: `run_id`, `mold_slug`, `status`; `api_key_id`, `expires_at`; …',
      additionalProperties: true,
    },
    read_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const notificationListQuery = {
  type: 'object',
  properties: { follow: { type: 'boolean', default: false }, ...keysetListQuery(20, 100) },
  additionalProperties: false,
} as const;

export const notificationListSchema = {
  type: 'object',
  required: ['notifications', 'next_cursor', 'unread_count'],
  properties: {
    notifications: { type: 'array', items: notificationSchema },
    next_cursor: { type: 'string', description: "The cursor of the next page; '' when there is none" },
    unread_count: { type: 'integer', minimum: 0 },
  },
  additionalProperties: false,
} as const;

export const notificationParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
} as const;

export const readAllSchema = {
  type: 'object',
  required: ['updated'],
  properties: { updated: { type: 'integer', minimum: 0, description: 'Notifications marked read' } },
  additionalProperties: false,
} as const;

const inAppByKind = {
  type: 'object',
  description: 'Per event kind: shown in the app (true) or not',
  properties: Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, { type: 'boolean' }])) as Record<
    (typeof NOTIFICATION_KINDS)[number],
    { type: 'boolean' }
  >,
  additionalProperties: false,
} as const;

export const preferencesSchema = {
  type: 'object',
  required: ['in_app'],
  properties: { in_app: { ...inAppByKind, required: NOTIFICATION_KINDS } },
  additionalProperties: false,
} as const;

export const updatePreferencesSchema = {
  type: 'object',
  required: ['in_app'],
  description: 'The kinds given change; the others stay',
  properties: { in_app: inAppByKind },
  additionalProperties: false,
} as const;
