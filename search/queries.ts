import { errors, type estypes } from '@elastic/elasticsearch';
import { ApiError } from '../core/errors';
import type { SearchEngine } from './client';
import { SEARCH_COLLECTIONS, type SearchCollection } from './collections';
import { typeAheadText, type DocDocument, type SearchDocument } from './documents';
import { aliasOf } from './indices';

// Every read of the engine for a tenant goes through `TenantSearch`. The engine has no
// row-level security, and the indices hold every tenant's documents: the only way a query
// leaves this module is through `scoped`, which adds the caller's tenant as a filter (and, for
// type-ahead, as the completion context). Nothing else here sends a search.

/** The engine's window: `from + size` beyond it is refused (index.max_result_window). */
export const MAX_SEARCH_WINDOW = 10_000;

export const FACETS = ['type', 'lifecycle', 'owner', 'tags', 'collection', 'grade'] as const;
export type Facet = (typeof FACETS)[number];

export interface SearchQuery {
  q: string;
  types?: string[];
  tags?: string[];
  owner?: string;
  lifecycle?: string;
  /** Entities whose scorecard grade is one of these. */
  grades?: string[];
  offset: number;
  limit: number;
}

export interface SearchResult {
  collection: SearchCollection;
  id: string;
  key: string;
  title: string;
  /** The best matching passage, HTML-escaped, matches in `<mark>`; else the description's start. */
  snippet: string | null;
  type: string | null;
  lifecycle: string | null;
  owner: string | null;
  tags: string[];
}

export interface SearchPage {
  results: SearchResult[];
  total: number;
  took: number;
  facets: Record<Facet, { value: string; count: number }[]>;
}

/** A documentation file as /docs lists it; `content` only when one file is read. */
export interface DocEntry {
  id: string;
  repository: string;
  path: string;
  title: string;
  updated_at: string | null;
  content?: string;
}

export interface Suggestion {
  collection: SearchCollection;
  id: string;
  key: string;
  title: string;
}

const SNIPPET_CHARACTERS = 160;
/** The fields a snippet can come from, best first. */
const HIGHLIGHTED = ['title', 'description', 'content'];
const FACET_SIZE = 20;

/** The engine is unreachable or timed out: the caller gets a 503, never a 500. */
function unavailable(err: unknown): never {
  if (
    err instanceof errors.ConnectionError ||
    err instanceof errors.TimeoutError ||
    err instanceof errors.NoLivingConnectionsError
  )
    throw new ApiError('SERVICE_UNAVAILABLE', 'Search is unavailable right now; the catalog itself is not affected');
  throw err;
}

/** The text match: words anywhere (typos forgiven), the last word as a prefix, a key exactly. */
function textQuery(q: string): estypes.QueryDslQueryContainer {
  return {
    bool: {
      should: [
        { multi_match: { query: q, fields: ['title^3', 'key^2', 'description', 'content'], fuzziness: 'AUTO' } },
        { match_bool_prefix: { title: { query: q, boost: 2 } } },
        { term: { key: { value: q, boost: 5 } } },
      ],
      minimum_should_match: 1,
    },
  };
}

/**
 * What the snippets mark: the words as typed and the last one as a prefix. Not the fuzzy match:
 * highlighting re-runs its query on every hit, and fuzzy expansion there made a search of 100k
 * entities take ~200 ms instead of ~35 (bench:search). A typo's hit shows the description's start.
 */
function highlightQuery(q: string): estypes.QueryDslQueryContainer {
  return {
    bool: {
      should: [
        { multi_match: { query: q, fields: HIGHLIGHTED } },
        ...HIGHLIGHTED.map((field) => ({ match_bool_prefix: { [field]: { query: q } } })),
      ],
    },
  };
}

/** The caller's filters; each tag is required. */
function filtersOf(query: SearchQuery): estypes.QueryDslQueryContainer[] {
  return [
    ...(query.types?.length ? [{ terms: { type: query.types } }] : []),
    ...(query.tags ?? []).map((tag) => ({ term: { tags: tag } })),
    ...(query.owner ? [{ term: { owner: query.owner } }] : []),
    ...(query.lifecycle ? [{ term: { lifecycle: query.lifecycle } }] : []),
    ...(query.grades?.length ? [{ terms: { grade: query.grades } }] : []),
  ];
}

function snippetOf(document: SearchDocument, highlight: Record<string, string[]> | undefined): string | null {
  const highlighted = highlight?.description?.[0] ?? highlight?.content?.[0] ?? highlight?.title?.[0];
  if (highlighted) return highlighted;
  if (!document.description) return null;
  const escaped = document.description.slice(0, SNIPPET_CHARACTERS).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return document.description.length > SNIPPET_CHARACTERS ? `${escaped}…` : escaped;
}

const docEntryOf = (id: string, document: DocDocument): DocEntry => ({
  id,
  repository: document.repository,
  path: document.path,
  title: document.title,
  updated_at: document.updated_at,
});

/** Searches of one tenant's documents: the tenant is fixed at construction and on every request. */
export class TenantSearch {
  constructor(
    private readonly engine: SearchEngine,
    private readonly tenantId: string,
  ) {}

  /** `query` restricted to this tenant: the one place a search body gets its tenant filter. */
  scoped(query: estypes.QueryDslQueryContainer, filters: estypes.QueryDslQueryContainer[] = []) {
    return { bool: { must: [query], filter: [{ term: { tenant_id: this.tenantId } }, ...filters] } };
  }

  private get indices(): string[] {
    return SEARCH_COLLECTIONS.map((collection) => aliasOf(this.engine, collection));
  }

  /**
   * The engine request of a search: the indices and the body `search` sends (bench:search sends
   * the same straight to the engine as its floor).
   */
  searchRequest(query: SearchQuery): { index: string[]; body: estypes.SearchRequest } {
    return {
      index: this.indices,
      body: {
        query: this.scoped(textQuery(query.q), filtersOf(query)),
        from: query.offset,
        size: query.limit,
        track_total_hits: true,
        // A documentation file's text is searched and highlighted, never sent back whole.
        _source: { excludes: ['content'] },
        highlight: {
          highlight_query: highlightQuery(query.q),
          encoder: 'html',
          pre_tags: ['<mark>'],
          post_tags: ['</mark>'],
          fields: {
            title: { number_of_fragments: 0 },
            description: { fragment_size: SNIPPET_CHARACTERS, number_of_fragments: 1 },
            content: { fragment_size: SNIPPET_CHARACTERS, number_of_fragments: 1 },
          },
        },
        aggs: Object.fromEntries(FACETS.map((facet) => [facet, { terms: { field: facet, size: FACET_SIZE } }])),
      },
    };
  }

  /** Full-text search over every collection, with facets of the whole match (not just the page). */
  async search(query: SearchQuery): Promise<SearchPage> {
    const { index, body } = this.searchRequest(query);
    const response = await this.engine.client
      // Before the first drain created the indices, there is simply nothing to find.
      .search<SearchDocument>({ index, ignore_unavailable: true, allow_no_indices: true, ...body })
      .catch(unavailable);
    // No score: the engine's BM25 figures come from statistics over every tenant's documents, so
    // they would tell a tenant about the others' words. The order alone is what callers get.
    const results = response.hits.hits.map(({ _id, _source, highlight }) => {
      const document = _source!;
      return {
        collection: document.collection,
        id: _id!,
        key: document.key,
        title: document.title,
        snippet: snippetOf(document, highlight),
        type: document.type,
        lifecycle: document.lifecycle,
        owner: document.owner,
        tags: document.tags,
      };
    });
    const aggregations = (response.aggregations ?? {}) as Record<string, estypes.AggregationsStringTermsAggregate>;
    const facets = Object.fromEntries(
      FACETS.map((facet) => [
        facet,
        ((aggregations[facet]?.buckets ?? []) as estypes.AggregationsStringTermsBucket[]).map((bucket) => ({
          value: String(bucket.key),
          count: bucket.doc_count,
        })),
      ]),
    ) as SearchPage['facets'];
    const total = typeof response.hits.total === 'number' ? response.hits.total : (response.hits.total?.value ?? 0);
    return { results, total, took: response.took, facets };
  }

  /**
   * The tenant's documentation files, by repository and path; only those of `repositories`
   * when given (an empty list finds nothing).
   */
  async docs(
    window: { offset: number; limit: number },
    repositories?: string[],
  ): Promise<{ entries: DocEntry[]; total: number }> {
    const response = await this.engine.client
      .search<DocDocument>({
        index: aliasOf(this.engine, 'docs'),
        ignore_unavailable: true,
        allow_no_indices: true,
        query: this.scoped({ match_all: {} }, repositories ? [{ terms: { repository: repositories } }] : []),
        sort: [{ repository: 'asc' }, { path: 'asc' }],
        from: window.offset,
        size: window.limit,
        track_total_hits: true,
        _source: { excludes: ['content', 'suggest'] },
      })
      .catch(unavailable);
    const total = typeof response.hits.total === 'number' ? response.hits.total : (response.hits.total?.value ?? 0);
    return { entries: response.hits.hits.map(({ _id, _source }) => docEntryOf(_id!, _source!)), total };
  }

  /** One documentation file with its content; undefined when the tenant has none by that id. */
  doc(id: string): Promise<DocEntry | undefined> {
    return this.firstDoc({ ids: { values: [id] } });
  }

  /** The README of the first of `repositories` (by name) that has one, with its content. */
  readme(repositories: string[]): Promise<DocEntry | undefined> {
    return this.firstDoc({
      bool: { filter: [{ terms: { repository: repositories } }, { term: { type: 'readme' } }] },
    });
  }

  private async firstDoc(match: estypes.QueryDslQueryContainer): Promise<DocEntry | undefined> {
    const response = await this.engine.client
      .search<DocDocument>({
        index: aliasOf(this.engine, 'docs'),
        ignore_unavailable: true,
        allow_no_indices: true,
        query: this.scoped(match),
        sort: [{ repository: 'asc' }, { path: 'asc' }],
        size: 1,
      })
      .catch(unavailable);
    const hit = response.hits.hits[0];
    return hit && { ...docEntryOf(hit._id!, hit._source!), content: hit._source!.content };
  }

  /** Type-ahead over one collection's titles and keys: the completion field, in this tenant's context. */
  async suggest(collection: SearchCollection, typed: string, size: number): Promise<Suggestion[]> {
    const prefix = typeAheadText(typed);
    if (!prefix) return [];
    const response = await this.engine.client
      .search<SearchDocument>({
        index: aliasOf(this.engine, collection),
        ignore_unavailable: true,
        allow_no_indices: true,
        _source: ['collection', 'key', 'title'],
        suggest: {
          titles: {
            prefix,
            completion: {
              field: 'suggest',
              size,
              skip_duplicates: true,
              fuzzy: { fuzziness: prefix.length > 3 ? 1 : 0 },
              contexts: { tenant: [this.tenantId] },
            },
          },
        },
      })
      .catch(unavailable);
    const options = (response.suggest?.titles?.[0]?.options ??
      []) as estypes.SearchCompletionSuggestOption<SearchDocument>[];
    return options.map(({ _id, _source }) => ({
      collection: _source!.collection,
      id: _id!,
      key: _source!.key,
      title: _source!.title,
    }));
  }
}
