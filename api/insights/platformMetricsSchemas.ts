import { CALLER_KINDS } from '../../core/insights/platformMetricsRules';
import { countsOf } from '../http/countSchemas';

// GET /insights/platform-metrics (api/insights/platformMetricsRoutes.ts).

const day = { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', maxLength: 10 } as const;

export const platformMetricsQuery = {
  type: 'object',
  properties: {
    from: { ...day, description: 'First day (UTC, inclusive); default 29 days before `to`' },
    to: { ...day, description: 'Last day (UTC, inclusive); default today, at most today' },
  },
  additionalProperties: false,
} as const;

const nullableMs = { type: ['integer', 'null'] } as const;
const share = { type: ['number', 'null'], description: 'Of all entities, 0 to 1; null for an empty catalog' } as const;

const forgeRunSchema = {
  type: 'object',
  required: ['mold', 'outcome', 'count', 'duration_p50_ms', 'duration_p95_ms'],
  properties: {
    mold: { type: 'string', description: 'The mold slug' },
    outcome: { type: 'string', description: "The run's status when the day was rolled up" },
    count: { type: 'integer' },
    duration_p50_ms: { ...nullableMs, description: 'Median start-to-finish time of the finished runs' },
    duration_p95_ms: nullableMs,
  },
  additionalProperties: false,
} as const;

const catalogSchema = {
  type: ['object', 'null'],
  description: "The catalog at the day's end; null when the day was rolled up later (backfilled)",
  required: ['entities', 'with_owner', 'with_docs', 'with_tier', 'owner_share', 'docs_share', 'tier_share'],
  properties: {
    entities: { type: 'integer' },
    with_owner: { type: 'integer' },
    with_docs: { type: 'integer', description: 'Entities with a non-empty README' },
    with_tier: { type: 'integer' },
    owner_share: share,
    docs_share: share,
    tier_share: share,
  },
  additionalProperties: false,
} as const;

const dayFiguresSchema = {
  type: 'object',
  required: [
    'day',
    'partial',
    'active_users',
    'agents_connected',
    'api_calls',
    'forge_runs',
    'searches',
    'zero_result_searches',
    'catalog',
  ],
  properties: {
    day: { type: 'string', format: 'date' },
    partial: { type: 'boolean', description: 'Today, computed live: the day is still going' },
    active_users: { type: 'integer', description: 'Users who called the API with a session that day' },
    agents_connected: { type: 'integer', description: 'Clusters whose agent called the API that day' },
    api_calls: countsOf(CALLER_KINDS),
    forge_runs: { type: 'array', items: forgeRunSchema },
    searches: { type: 'integer' },
    zero_result_searches: { type: 'integer' },
    catalog: catalogSchema,
  },
  additionalProperties: false,
} as const;

export const platformMetricsSchema = {
  type: 'object',
  required: ['from', 'to', 'days'],
  properties: {
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    days: {
      type: 'array',
      description: 'Oldest first; a closed day not rolled up yet is absent',
      items: dayFiguresSchema,
    },
  },
  additionalProperties: false,
} as const;
