import { LIFECYCLES } from '../../core/catalog/types';
import { ANALYTICS_PERIODS } from '../../search/analytics';
import { BACKFILL_COLLECTIONS } from '../../search/backfill';
import { SEARCH_COLLECTIONS } from '../../search/collections';
import { FACETS } from '../../search/queries';
import { shapeAQuery } from '../http/pagination';
import { shapeAPageSchema } from '../teams/schemas';

// Response schemas of the search endpoints (api/search/routes.ts).

/** GET /indexing/status: the tenant's search backlog (the outbox). */
const backlogProperties = {
  status: {
    type: 'string',
    enum: ['current', 'indexing', 'stalled'],
    description:
      '`current`: every write is in the index; `indexing`: writes are on their way; `stalled`: the oldest has waited over a minute (the search engine is unreachable; nothing is lost, the backlog drains when it returns)',
  },
  queue_size: { type: 'integer', description: 'Writes not yet in the search index' },
  oldest_pending_seconds: { type: ['number', 'null'], description: 'Age of the oldest of them; null when none' },
} as const;

export const indexingStatusSchema = {
  type: 'object',
  description: "The caller's tenant's writes only",
  required: ['status', 'queue_size', 'oldest_pending_seconds'],
  properties: {
    ...backlogProperties,
    platform: {
      type: 'object',
      description: "Every tenant's writes together: shown to platform operators only",
      required: ['status', 'queue_size', 'oldest_pending_seconds'],
      properties: backlogProperties,
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const csv = (description: string) => ({ type: 'string', minLength: 1, maxLength: 1000, description }) as const;

export const searchQuery = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'What to look for (required)' },
    types: csv('Comma-separated: documents of any of these types (an entity type, a mold category)'),
    tags: csv('Comma-separated: documents with all of these tags'),
    owner: { type: 'string', minLength: 1, maxLength: 320 },
    lifecycle: { type: 'string', enum: LIFECYCLES },
    grade: {
      type: 'string',
      minLength: 1,
      maxLength: 40,
      description: 'Comma-separated scorecard grades (A+ written A%2B): entities graded one of them',
    },
    ...shapeAQuery(),
  },
  additionalProperties: false,
} as const;

const nullableString = { type: ['string', 'null'] } as const;

const searchResultSchema = {
  type: 'object',
  description:
    'Results come best first. No relevance score is given: the engine computes it from statistics over every tenant, so it is not the tenant’s to see (docs/limits.md, Search)',
  required: ['collection', 'id', 'key', 'title', 'snippet', 'type', 'lifecycle', 'owner', 'tags'],
  properties: {
    collection: { type: 'string', enum: SEARCH_COLLECTIONS },
    id: { type: 'string' },
    key: { type: 'string', description: "The document's handle: a service_id, a slug, an email" },
    title: { type: 'string' },
    snippet: { ...nullableString, description: 'HTML-escaped; matches wrapped in <mark>' },
    type: nullableString,
    lifecycle: nullableString,
    owner: nullableString,
    tags: { type: 'array', items: { type: 'string' } },
  },
  additionalProperties: false,
} as const;

const facetSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['value', 'count'],
    properties: { value: { type: 'string' }, count: { type: 'integer' } },
    additionalProperties: false,
  },
} as const;

export const searchResponseSchema = {
  type: 'object',
  required: ['results', 'sections', 'facets', 'total', 'took', 'page'],
  properties: {
    results: { type: 'array', items: searchResultSchema },
    sections: {
      type: 'array',
      description: "This page's results grouped by collection",
      items: {
        type: 'object',
        required: ['collection', 'results'],
        properties: {
          collection: { type: 'string', enum: SEARCH_COLLECTIONS },
          results: { type: 'array', items: searchResultSchema },
        },
        additionalProperties: false,
      },
    },
    facets: {
      type: 'object',
      description: 'Counts over every match, not only this page (the 20 largest per facet)',
      required: FACETS,
      properties: Object.fromEntries(FACETS.map((facet) => [facet, facetSchema])) as Record<
        (typeof FACETS)[number],
        typeof facetSchema
      >,
      additionalProperties: false,
    },
    total: { type: 'integer' },
    took: { type: 'integer', description: "The engine's time in ms" },
    page: {
      type: 'object',
      required: ['limit', 'total', 'nextCursor', 'prevCursor', 'offset'],
      properties: { ...shapeAPageSchema.properties, offset: { type: 'integer' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const entitySuggestQuery = {
  type: 'object',
  required: ['q'],
  properties: {
    q: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '\\S',
      description: 'The start of a name or service_id',
    },
    limit: { type: 'integer', minimum: 1, maximum: 20, default: 10 },
  },
  additionalProperties: false,
} as const;

export const entitySuggestSchema = {
  type: 'object',
  required: ['entities'],
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'service_id', 'name'],
        properties: { id: { type: 'string' }, service_id: { type: 'string' }, name: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const searchAnalyticsParams = {
  type: 'object',
  required: ['period'],
  properties: {
    period: { type: 'string', enum: Object.keys(ANALYTICS_PERIODS) as (keyof typeof ANALYTICS_PERIODS)[] },
  },
  additionalProperties: false,
} as const;

const queryCounts = {
  type: 'array',
  items: {
    type: 'object',
    required: ['query', 'count'],
    properties: { query: { type: 'string' }, count: { type: 'integer' } },
    additionalProperties: false,
  },
} as const;

export const searchAnalyticsSchema = {
  type: 'object',
  required: ['period', 'total_searches', 'searches_per_day', 'top_queries', 'zero_result_queries', 'median_latency_ms'],
  properties: {
    period: { type: 'string', enum: Object.keys(ANALYTICS_PERIODS) as (keyof typeof ANALYTICS_PERIODS)[] },
    total_searches: { type: 'integer' },
    searches_per_day: {
      type: 'array',
      description: 'Every day of the period, oldest first (UTC dates); days without searches count 0',
      items: {
        type: 'object',
        required: ['date', 'count'],
        properties: { date: { type: 'string', format: 'date' }, count: { type: 'integer' } },
        additionalProperties: false,
      },
    },
    top_queries: { ...queryCounts, description: 'The 10 most frequent' },
    zero_result_queries: { ...queryCounts, description: 'The 10 most frequent that found nothing' },
    median_latency_ms: { type: ['number', 'null'], description: "The engine's median time; null without searches" },
  },
  additionalProperties: false,
} as const;

export const backfillBody = {
  type: 'object',
  properties: {
    collections: {
      type: 'array',
      items: { type: 'string', enum: BACKFILL_COLLECTIONS },
      minItems: 1,
      uniqueItems: true,
      description: 'Without it, all of them. docs, docs_sites and k8s_workloads are not backfilled',
    },
  },
  additionalProperties: false,
} as const;

export const backfillStartedSchema = {
  type: 'object',
  required: ['message', 'collections', 'started_at'],
  properties: {
    message: { type: 'string' },
    collections: { type: 'array', items: { type: 'string', enum: BACKFILL_COLLECTIONS } },
    started_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
} as const;

const collectionProgressSchema = {
  type: 'object',
  required: ['read', 'indexed', 'done'],
  properties: { read: { type: 'integer' }, indexed: { type: 'integer' }, done: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export const backfillStatusSchema = {
  type: 'object',
  required: ['status', 'collections', 'progress', 'started_at', 'duration_seconds'],
  properties: {
    status: { type: 'string', enum: ['idle', 'running', 'completed', 'failed'] },
    collections: { type: 'array', items: { type: 'string', enum: BACKFILL_COLLECTIONS } },
    progress: {
      type: 'object',
      description: 'Per collection: rows read from the database, documents the engine acknowledged',
      properties: Object.fromEntries(BACKFILL_COLLECTIONS.map((c) => [c, collectionProgressSchema])) as Record<
        (typeof BACKFILL_COLLECTIONS)[number],
        typeof collectionProgressSchema
      >,
      additionalProperties: false,
    },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    duration_seconds: { type: 'number' },
    completed_at: { type: 'string', format: 'date-time' },
    error: { type: 'string' },
  },
  additionalProperties: false,
} as const;

/** POST /admin/recrawl's limits (spec, Limits). */
export const RECRAWL_BODY_BYTES = 64 * 1024;
export const RECRAWL_MAX_REPOSITORIES = 500;

export const recrawlBody = {
  type: 'object',
  properties: {
    repositories: {
      type: 'array',
      maxItems: RECRAWL_MAX_REPOSITORIES,
      items: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$' },
      description: 'owner/repo names; without it, every repository of the tenant',
    },
  },
  additionalProperties: false,
} as const;

export const recrawlAcceptedSchema = {
  type: 'object',
  required: ['message', 'scope', 'reset_documents', 'reset_repositories', 'operation_id'],
  properties: {
    message: { type: 'string' },
    scope: { type: 'string', enum: ['tenant', 'filtered'] },
    repositories: { type: 'array', items: { type: 'string' }, description: 'Echoed when the scope is filtered' },
    reset_documents: { type: 'integer', description: 'Documents flipped from indexed to not indexed' },
    reset_repositories: { type: 'integer', description: 'Repositories made due now' },
    operation_id: {
      type: 'string',
      pattern: '^search-crawl-',
      description: "The crawl workflow id (Temporal UI): one per tenant, the running one's while it runs",
    },
    already_running: {
      type: 'boolean',
      description: "The tenant's recrawl was already running: no second one was started; `operation_id` is that one's",
    },
    trigger_error: {
      type: 'string',
      description: 'Starting the crawl failed: the reset stands, and the hourly tick crawls it',
    },
  },
  additionalProperties: false,
} as const;

const docEntryProperties = {
  id: { type: 'string' },
  repository: { type: 'string', description: 'owner/name' },
  path: { type: 'string', description: 'README.md, or a Markdown file under docs/' },
  title: { type: 'string', description: 'The first heading, else the path' },
  updated_at: { type: ['string', 'null'], format: 'date-time' },
} as const;

export const docEntrySchema = {
  type: 'object',
  required: ['id', 'repository', 'path', 'title', 'updated_at'],
  properties: docEntryProperties,
  additionalProperties: false,
} as const;

export const docContentSchema = {
  type: 'object',
  required: ['id', 'repository', 'path', 'title', 'updated_at', 'content', 'format'],
  properties: { ...docEntryProperties, content: { type: 'string' }, format: { type: 'string', enum: ['markdown'] } },
  additionalProperties: false,
} as const;

export const docsQuery = {
  type: 'object',
  properties: {
    repository: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$' },
    ...shapeAQuery(),
  },
  additionalProperties: false,
} as const;

export const docsListSchema = {
  type: 'object',
  required: ['docs', 'page'],
  properties: { docs: { type: 'array', items: docEntrySchema }, page: shapeAPageSchema },
  additionalProperties: false,
} as const;

export const docIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  additionalProperties: false,
} as const;
