import { LIFECYCLES, TIERS, ENTITY_TYPES } from '../../core/catalog/types';
import { checkSchema, checkVariantsSchema } from '../../core/scorecards/checks';
import { FINDING_SEVERITIES, GRADES } from '../../core/scorecards/types';
import { COUNT as count } from '../http/countSchemas';

const uuid = { type: 'string', format: 'uuid' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const name = { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S(.*\\S)?$' } as const;
const description = { type: ['string', 'null'], maxLength: 2000 } as const;
const weight = { type: 'number', exclusiveMinimum: 0, maximum: 1000 } as const;
const threshold = { type: 'number', minimum: 0, maximum: 100 } as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: uuid },
  additionalProperties: false,
} as const;

export const categoryInputSchema = {
  type: 'object',
  required: ['name', 'weight'],
  properties: { name, description, weight },
  additionalProperties: false,
} as const;

export const categorySchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'weight', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    weight: { type: 'number' },
    created_at: dateTime,
    updated_at: dateTime,
  },
  additionalProperties: false,
} as const;

export const categoriesSchema = { type: 'array', items: categorySchema } as const;

const severity = {
  type: ['string', 'null'],
  enum: [...FINDING_SEVERITIES, null],
  description: 'When set, a failing rule opens a security finding of this severity (and `finding_type`)',
} as const;
const findingType = {
  type: ['string', 'null'],
  pattern: '^[a-z][a-z0-9_]{0,62}$',
  description: 'The finding type a failing rule opens, e.g. missing_owner, no_readme',
} as const;

export const ruleInputSchema = {
  type: 'object',
  required: ['name', 'category_id', 'weight', 'check'],
  properties: { name, description, category_id: uuid, weight, severity, finding_type: findingType, check: checkSchema },
  additionalProperties: false,
} as const;

export const ruleSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'description',
    'category_id',
    'weight',
    'severity',
    'finding_type',
    'check',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: uuid,
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    category_id: uuid,
    weight: { type: 'number' },
    severity: { type: ['string', 'null'], enum: [...FINDING_SEVERITIES, null] },
    finding_type: { type: ['string', 'null'] },
    check: checkVariantsSchema,
    created_at: dateTime,
    updated_at: dateTime,
  },
  additionalProperties: false,
} as const;

export const rulesSchema = { type: 'array', items: ruleSchema } as const;

export const gradingInputSchema = {
  type: 'object',
  description: 'The lowest weighted total (0-100) of each grade, strictly decreasing; below `d` is F',
  required: ['a_plus', 'a', 'b', 'c', 'd'],
  properties: { a_plus: threshold, a: threshold, b: threshold, c: threshold, d: threshold },
  additionalProperties: false,
} as const;

export const gradingSchema = {
  type: 'object',
  required: ['a_plus', 'a', 'b', 'c', 'd', 'updated_at'],
  properties: {
    a_plus: { type: 'number' },
    a: { type: 'number' },
    b: { type: 'number' },
    c: { type: 'number' },
    d: { type: 'number' },
    updated_at: dateTime,
  },
  additionalProperties: false,
} as const;

export const entityScorecardSchema = {
  type: 'object',
  required: ['entity_id', 'pending', 'score', 'grade', 'categories', 'rules', 'evaluated_at', 'entity_version'],
  properties: {
    entity_id: uuid,
    pending: {
      type: 'boolean',
      description: 'True while the entity has not been scored yet (then score, grade and evaluated_at are null)',
    },
    score: { type: ['number', 'null'], description: 'The weighted total, 0-100' },
    grade: { type: ['string', 'null'], enum: [...GRADES, null] },
    categories: {
      type: 'array',
      items: {
        type: 'object',
        required: ['category_id', 'name', 'weight', 'score'],
        properties: {
          category_id: uuid,
          name: { type: 'string' },
          weight: { type: 'number' },
          score: { type: 'number' },
        },
        additionalProperties: false,
      },
    },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        required: ['rule_id', 'name', 'category_id', 'weight', 'passed', 'reason'],
        properties: {
          rule_id: uuid,
          name: { type: 'string' },
          category_id: uuid,
          weight: { type: 'number' },
          passed: { type: 'boolean' },
          reason: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
    evaluated_at: { type: ['string', 'null'], format: 'date-time' },
    entity_version: {
      type: ['string', 'null'],
      format: 'date-time',
      description: "The entity's updated_at that was evaluated",
    },
  },
  additionalProperties: false,
} as const;

export const initiativeFilterSchema = {
  type: 'object',
  description: 'Which entities the initiative covers (every given field must match; none: every entity)',
  properties: {
    type: { type: 'string', enum: ENTITY_TYPES },
    lifecycle: { type: 'string', enum: LIFECYCLES },
    tier: { type: 'string', enum: TIERS },
    owner: { type: 'string', minLength: 1, maxLength: 200 },
  },
  additionalProperties: false,
} as const;

export const initiativeInputSchema = {
  type: 'object',
  required: ['name', 'rule_ids', 'target_date'],
  properties: {
    name,
    description,
    rule_ids: { type: 'array', items: uuid, minItems: 1, maxItems: 100 },
    entity_filter: initiativeFilterSchema,
    target_date: {
      type: 'string',
      format: 'date',
      description: 'Past it, each entity still failing gets a governance action',
    },
  },
  additionalProperties: false,
} as const;

const initiativeProperties = {
  id: uuid,
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  rule_ids: { type: 'array', items: uuid },
  entity_filter: initiativeFilterSchema,
  target_date: { type: 'string', format: 'date' },
  actions_opened_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'When the governance actions for the entities still failing past the target date were opened',
  },
  created_at: dateTime,
  updated_at: dateTime,
} as const;
const initiativeRequired = [
  'id',
  'name',
  'description',
  'rule_ids',
  'entity_filter',
  'target_date',
  'actions_opened_at',
  'created_at',
  'updated_at',
] as const;

export const initiativeSchema = {
  type: 'object',
  required: initiativeRequired,
  properties: initiativeProperties,
  additionalProperties: false,
} as const;

export const initiativesSchema = { type: 'array', items: initiativeSchema } as const;

export const initiativeProgressSchema = {
  type: 'object',
  required: [...initiativeRequired, 'progress'],
  properties: {
    ...initiativeProperties,
    progress: {
      type: 'object',
      required: ['total', 'passing', 'by_team', 'entities'],
      properties: {
        total: count,
        passing: { ...count, description: 'Entities passing every rule of the initiative at their latest scoring' },
        by_team: {
          type: 'array',
          items: {
            type: 'object',
            required: ['owner', 'total', 'passing'],
            properties: { owner: { type: ['string', 'null'] }, total: count, passing: count },
            additionalProperties: false,
          },
        },
        entities: {
          type: 'array',
          description: 'A page (limit, offset) of the entities, those still failing first',
          items: {
            type: 'object',
            required: ['entity_id', 'name', 'owner', 'passing', 'failing_rule_ids'],
            properties: {
              entity_id: uuid,
              name: { type: 'string' },
              owner: { type: ['string', 'null'] },
              passing: { type: 'boolean' },
              failing_rule_ids: { type: 'array', items: uuid },
            },
            additionalProperties: false,
          },
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const progressQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
    offset: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 },
  },
  additionalProperties: false,
} as const;
