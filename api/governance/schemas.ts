import { ACTION_PRIORITIES, ACTION_SOURCE_TYPES, ACTION_STATUSES } from '../../core/governance/types';
import { LIMIT_OFFSET_QUERY } from '../http/pagination';
import { COUNT as count, countsOf } from '../http/countSchemas';

// The governance actions' request and response schemas (docs/governance.md).

/** Bulk status updates take at most this many ids. */
export const BULK_MAX_IDS = 200;

const dateTime = { type: 'string', format: 'date-time' } as const;
export const uuid = { type: 'string', format: 'uuid' } as const;
const day = { type: 'string', format: 'date' } as const;
const nullableDay = { ...day, type: ['string', 'null'] } as const;
const status = { type: 'string', enum: ACTION_STATUSES } as const;
const priority = { type: 'string', enum: ACTION_PRIORITIES } as const;
const title = { type: 'string', minLength: 1, maxLength: 200 } as const;
const actionType = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'e.g. documentation, security_finding',
} as const;
const assignee = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'A team slug or a user’s email',
} as const;
const longText = { type: 'string', maxLength: 10_000 } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const actionSchema = {
  type: 'object',
  required: [
    'id',
    'title',
    'description',
    'type',
    'status',
    'priority',
    'entity_id',
    'entity_name',
    'assigned_to',
    'created_by',
    'resolution_notes',
    'due_date',
    'source_type',
    'source_id',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    title: { type: 'string' },
    description: nullableString,
    type: { type: 'string' },
    status,
    priority,
    entity_id: { type: ['string', 'null'], format: 'uuid' },
    entity_name: nullableString,
    assigned_to: nullableString,
    created_by: { type: 'string' },
    resolution_notes: nullableString,
    due_date: { type: ['string', 'null'], format: 'date' },
    source_type: { type: 'string', enum: ACTION_SOURCE_TYPES },
    source_id: nullableString,
    created_at: dateTime,
    updated_at: dateTime,
  },
  additionalProperties: false,
} as const;

export const createActionSchema = {
  type: 'object',
  required: ['title', 'type', 'priority'],
  properties: {
    title,
    type: actionType,
    priority,
    description: longText,
    entity_id: uuid,
    assigned_to: assignee,
    due_date: day,
  },
  additionalProperties: false,
} as const;

export const updateActionSchema = {
  type: 'object',
  properties: {
    status,
    priority,
    assigned_to: { ...assignee, type: ['string', 'null'] },
    resolution_notes: { ...longText, type: ['string', 'null'] },
    due_date: nullableDay,
  },
  additionalProperties: false,
} as const;

export const bulkStatusSchema = {
  type: 'object',
  required: ['ids', 'status'],
  properties: {
    ids: {
      type: 'array',
      items: uuid,
      minItems: 1,
      maxItems: BULK_MAX_IDS,
      uniqueItems: true,
    },
    status,
  },
  additionalProperties: false,
} as const;

export const bulkResultSchema = {
  type: 'object',
  required: ['requested', 'updated'],
  properties: {
    requested: { type: 'integer', description: 'The ids sent' },
    updated: {
      type: 'integer',
      description: 'The actions whose status changed (final, unknown and deleted ones are skipped)',
    },
  },
  additionalProperties: false,
} as const;

const flag = (description: string) => ({ type: 'boolean', description }) as const;

/** The filters of both action lists; the entity's list leaves out `entity_id`. */
const filterProperties = {
  status,
  priority,
  type: actionType,
  assigned_to: assignee,
  source_type: { type: 'string', enum: ACTION_SOURCE_TYPES },
  overdue: flag('true: open or in_progress and past due_date (UTC); false: the others'),
  closed: flag('true: resolved, dismissed or wont_fix only; false: open and in_progress only'),
  actionable: flag('true: open and in_progress only; false: the final ones'),
  ...LIMIT_OFFSET_QUERY,
} as const;

export const actionListQuery = {
  type: 'object',
  properties: { ...filterProperties, entity_id: uuid },
  additionalProperties: false,
} as const;

export const entityActionListQuery = {
  type: 'object',
  properties: filterProperties,
  additionalProperties: false,
} as const;

export const actionListSchema = {
  type: 'object',
  required: ['actions', 'total', 'summary', 'limit', 'offset', 'next_cursor'],
  properties: {
    actions: { type: 'array', items: actionSchema, maxItems: 200 },
    total: { ...count, description: 'The actions the filters match' },
    summary: {
      ...countsOf(['open', 'in_progress', 'overdue'] as const),
      description: 'Of the actions the filters match',
    },
    limit: count,
    offset: count,
    next_cursor: {
      type: ['string', 'null'],
      description: 'The offset of the next page, as a string; null on the last page',
    },
  },
  additionalProperties: false,
} as const;

export const actionIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: uuid },
  additionalProperties: false,
} as const;

export const dashboardSchema = {
  type: 'object',
  required: ['total_actions', 'by_status', 'by_priority', 'overdue', 'unassigned'],
  properties: {
    total_actions: count,
    by_status: countsOf(ACTION_STATUSES),
    by_priority: countsOf(ACTION_PRIORITIES),
    overdue: { ...count, description: 'Open or in_progress actions past their due date' },
    unassigned: { ...count, description: 'Open or in_progress actions assigned to nobody' },
  },
  additionalProperties: false,
} as const;

export const documentationSchema = {
  type: 'object',
  required: [
    'total_entities',
    'documented',
    'undocumented',
    'coverage_percent',
    'with_readme',
    'with_repository_docs',
    'freshness',
  ],
  properties: {
    total_entities: count,
    documented: { ...count, description: 'Entities with a README of their own or a link to a crawled repository' },
    undocumented: count,
    coverage_percent: { type: 'number', minimum: 0, maximum: 100 },
    with_readme: count,
    with_repository_docs: count,
    freshness: {
      ...countsOf(['fresh', 'aging', 'stale'] as const),
      description: 'Documented entities by their last change: under 30 days, 30 to 90 days, over 90 days',
    },
  },
  additionalProperties: false,
} as const;
