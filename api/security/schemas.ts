import { GRADES } from '../../core/scorecards/types';
import { FINDING_SEVERITIES, FINDING_SOURCES, FINDING_STATUSES } from '../../core/security/types';
import { uuid } from '../governance/schemas';
import { shapeAQuery } from '../http/pagination';
import { COUNT as count, countsOf } from '../http/countSchemas';

// The security findings' request and response schemas (docs/security-findings.md).

const dateTime = { type: 'string', format: 'date-time' } as const;
const severity = { type: 'string', enum: FINDING_SEVERITIES } as const;
const status = { type: 'string', enum: FINDING_STATUSES } as const;
const findingType = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'e.g. missing_owner, no_readme, exposed_secret',
} as const;
const longText = { type: 'string', maxLength: 10_000 } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const findingSchema = {
  type: 'object',
  required: [
    'id',
    'entity_id',
    'entity_name',
    'type',
    'severity',
    'status',
    'title',
    'description',
    'remediation',
    'source',
    'fingerprint',
    'created_at',
    'updated_at',
    'resolved_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    entity_id: { type: 'string', format: 'uuid' },
    entity_name: { type: 'string' },
    type: { type: 'string' },
    severity,
    status,
    title: { type: 'string' },
    description: nullableString,
    remediation: nullableString,
    source: { type: 'string', enum: FINDING_SOURCES },
    fingerprint: { type: 'string' },
    created_at: dateTime,
    updated_at: dateTime,
    resolved_at: { type: ['string', 'null'], format: 'date-time', description: 'Set while resolved' },
  },
  additionalProperties: false,
} as const;

export const reportFindingSchema = {
  type: 'object',
  required: ['entity_id', 'type', 'severity', 'title', 'source'],
  properties: {
    entity_id: uuid,
    type: findingType,
    severity,
    title: { type: 'string', minLength: 1, maxLength: 200 },
    description: longText,
    remediation: longText,
    source: {
      type: 'string',
      enum: ['scanner', 'manual'],
      description: 'scorecard findings come from failing scorecard rules only',
    },
    fingerprint: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description:
        'What makes two reports of the same type on an entity the same finding; default: SHA-256 of type and title',
    },
  },
  additionalProperties: false,
} as const;

export const findingStatusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status },
  additionalProperties: false,
} as const;

export const findingIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: uuid },
  additionalProperties: false,
} as const;

export const findingListQuery = {
  type: 'object',
  properties: {
    severity,
    entity_id: uuid,
    type: findingType,
    status,
    ...shapeAQuery(),
  },
  additionalProperties: false,
} as const;

export const findingListSchema = {
  type: 'object',
  required: ['findings', 'pagination'],
  properties: {
    findings: { type: 'array', items: findingSchema, maxItems: 100 },
    pagination: {
      type: 'object',
      required: ['total', 'nextCursor'],
      properties: {
        total: { type: 'integer', minimum: 0 },
        nextCursor: { type: ['string', 'null'], description: 'Opaque; null on the last page' },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const overviewSchema = {
  type: 'object',
  required: ['overall_grade', 'total_entities', 'by_grade', 'findings_summary'],
  properties: {
    overall_grade: {
      type: ['string', 'null'],
      enum: [...GRADES, null],
      description:
        'The mean score of the graded entities, by the tenant’s grading thresholds; null when none is graded',
    },
    total_entities: count,
    by_grade: { ...countsOf([...GRADES, 'ungraded'] as const), description: 'ungraded: not scored yet' },
    findings_summary: { ...countsOf(FINDING_SEVERITIES), description: 'Open and acknowledged findings by severity' },
  },
  additionalProperties: false,
} as const;
