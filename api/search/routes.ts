import { tagList } from '../../core/catalog/entityRules';
import { invalid, notFound } from '../../core/errors';
import { gradeList } from '../../core/scorecards/types';
import { SEARCH_COLLECTIONS } from '../../search/collections';
import { recordSearch, searchAnalytics } from '../../search/analytics';
import { BACKFILL_COLLECTIONS } from '../../search/backfill';
import { backfillStatus, startBackfill } from '../../search/backfillControl';
import { recrawl } from '../../search/crawlControl';
import { outboxBacklog } from '../../search/outbox';
import { MAX_SEARCH_WINDOW, TenantSearch, type SearchResult } from '../../search/queries';
import { defineRoute, linksTo } from '../http/route';
import { shapeAPage, shapeAWindow } from '../http/pagination';
import {
  RECRAWL_BODY_BYTES,
  backfillBody,
  docContentSchema,
  docIdParams,
  docsListSchema,
  docsQuery,
  recrawlAcceptedSchema,
  recrawlBody,
  backfillStartedSchema,
  backfillStatusSchema,
  entitySuggestQuery,
  searchAnalyticsParams,
  searchAnalyticsSchema,
  entitySuggestSchema,
  indexingStatusSchema,
  searchQuery,
  searchResponseSchema,
} from './schemas';

// Search reads Elasticsearch only (derived data; the catalog itself is read from PostgreSQL):
// no transaction is held while the engine answers.

/** A shape A window the engine can serve: it pages at most 10,000 results deep. */
function engineWindow(query: { limit: number; cursor?: string }) {
  const window = shapeAWindow(query);
  if (window.offset + window.limit > MAX_SEARCH_WINDOW)
    throw invalid('Pages reach 10,000 results deep; narrow the query', [
      { field: 'query.cursor', message: `offset + limit must be at most ${MAX_SEARCH_WINDOW}` },
    ]);
  return window;
}

export const searchRoutes = [
  defineRoute({
    method: 'GET',
    path: '/search',
    tag: 'Search',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      "Full-text search over the tenant's entities, molds, teams and users: typo-tolerant words, the last one as a prefix; results with a highlighted snippet, grouped by collection in `sections`, and facets over every match. Shape A with an offset cursor (`page.offset`); the engine pages up to 10,000 results deep. 503 while the search engine is unreachable",
    query: searchQuery,
    responses: {
      200: { description: '`{results, sections, facets, total, took, page}`', schema: searchResponseSchema },
    },
    handler: async ({ auth, deps, query, inTenant }) => {
      const window = engineWindow(query);
      const found = await new TenantSearch(deps.search, auth.tenantId).search({
        q: query.q,
        types: tagList(query.types),
        tags: tagList(query.tags),
        owner: query.owner,
        lifecycle: query.lifecycle,
        grades: gradeList(query.grade),
        ...window,
      });
      await inTenant((trx) =>
        recordSearch(trx, auth.tenantId, { q: query.q, resultCount: found.total, tookMs: found.took }),
      );
      const sections = SEARCH_COLLECTIONS.map((collection) => ({
        collection,
        results: found.results.filter((result: SearchResult) => result.collection === collection),
      })).filter((section) => section.results.length > 0);
      return { ...found, sections, page: { ...shapeAPage(window, found.total), offset: window.offset } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/catalog/search-entities',
    tag: 'Search',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      'Type-ahead over entities: names and service_ids starting with `q` (one typo forgiven past three characters), best first. 503 while the search engine is unreachable',
    query: entitySuggestQuery,
    responses: { 200: { description: '`{entities}`', schema: entitySuggestSchema } },
    handler: async ({ auth, deps, query }) => {
      const suggestions = await new TenantSearch(deps.search, auth.tenantId).suggest('entities', query.q, query.limit);
      return { entities: suggestions.map(({ id, key, title }) => ({ id, service_id: key, name: title })) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/analytics/search/{period}',
    tag: 'Search',
    access: 'catalog:read',
    summary:
      "The tenant's searches over the last 7, 30 or 90 days (UTC, today included): per day, the most frequent queries, those that found nothing, and the engine's median time. Queries are recorded lowercased, with anything credential-like masked",
    params: searchAnalyticsParams,
    responses: { 200: { description: 'Search analytics', schema: searchAnalyticsSchema } },
    handler: ({ db, params }) => searchAnalytics(db, params.period),
  }),
  defineRoute({
    method: 'GET',
    path: '/indexing/status',
    tag: 'Search',
    access: 'catalog:read',
    summary:
      "The tenant's search indexing backlog: its writes not yet searchable and the age of the oldest. A platform operator also gets every tenant's together (`platform`)",
    responses: {
      200: { description: '`{status, queue_size, oldest_pending_seconds, platform?}`', schema: indexingStatusSchema },
    },
    handler: async ({ auth, db, deps }) => ({
      ...(await outboxBacklog(db)),
      // The shared queue is the platform's business: a tenant learns nothing of others' writes.
      ...(auth.operator && { platform: await outboxBacklog(deps.system) }),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/backfill',
    tag: 'Search',
    access: 'operator',
    transaction: 'on-demand',
    summary:
      "Rebuilds the search indices from the database, every tenant's, in the background (a Temporal workflow on the search pool): 202 at once, 409 while one runs. Writes documents, never deletes. Platform operators only: it reads across tenants",
    body: backfillBody,
    optionalBody: true,
    responses: { 202: { description: 'Started', schema: backfillStartedSchema } },
    handler: async ({ deps, body }) => {
      const started = await startBackfill(deps.temporal, body.collections ?? [...BACKFILL_COLLECTIONS]);
      return { message: 'Backfill started', ...started };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/docs',
    tag: 'Search',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary:
      "The tenant's documentation files as the crawler indexed them (READMEs and Markdown under docs/ of its repositories), by repository and path; `repository` narrows to one. The content lives only in the search engine: 503 while it is unreachable",
    query: docsQuery,
    responses: {
      200: {
        description: '`{docs, page}`',
        schema: docsListSchema,
        links: linksTo(['GET /docs/{id}'], { id: '$response.body#/docs/0/id' }),
      },
    },
    handler: async ({ auth, deps, query }) => {
      const window = engineWindow(query);
      const { entries, total } = await new TenantSearch(deps.search, auth.tenantId).docs(
        window,
        query.repository ? [query.repository] : undefined,
      );
      return { docs: entries, page: shapeAPage(window, total) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/docs/{id}',
    tag: 'Search',
    access: 'catalog:read',
    transaction: 'on-demand',
    summary: 'One documentation file with its Markdown content; 404 when the tenant has none by that id',
    params: docIdParams,
    responses: { 200: { description: 'The file', schema: docContentSchema } },
    handler: async ({ auth, deps, params }) => {
      const doc = await new TenantSearch(deps.search, auth.tenantId).doc(params.id);
      if (!doc) throw notFound('Document');
      return { ...doc, content: doc.content ?? '', format: 'markdown' as const };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/recrawl',
    tag: 'Search',
    access: 'admin:write',
    transaction: 'on-demand',
    summary:
      "Forces the tenant's documentation (all of it, or that of the named repositories) to be fetched again: marks its documents not indexed and its repositories due, in one transaction, then starts a crawl (a Temporal workflow on the search pool, `operation_id`). One per tenant at a time: while one runs, the call answers with it (`already_running`). 202 even when starting the crawl fails (`trigger_error`; the hourly tick picks it up). Body at most 64 KiB, at most 500 names of at most 255 characters",
    body: recrawlBody,
    optionalBody: true,
    responses: { 202: { description: 'Reset committed', schema: recrawlAcceptedSchema } },
    handler: ({ auth, deps, body, ctx, inTenant }) => {
      if ((ctx.request.bodyBytes ?? 0) > RECRAWL_BODY_BYTES)
        throw invalid('Request body is over 64 KiB', [
          { field: 'body', message: `must be at most ${RECRAWL_BODY_BYTES} bytes` },
        ]);
      return recrawl(deps.temporal, inTenant, auth.tenantId, body.repositories);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/backfill/status',
    tag: 'Search',
    access: 'operator',
    transaction: 'on-demand',
    summary:
      'The latest backfill: idle (none yet), running (with progress per collection), completed (`completed_at`) or failed (`error`), with `duration_seconds`. Kept by Temporal, so it survives an API restart',
    responses: { 200: { description: 'Backfill status', schema: backfillStatusSchema } },
    handler: ({ deps }) => backfillStatus(deps.temporal),
  }),
];
