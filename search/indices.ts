import type { estypes } from '@elastic/elasticsearch';
import type { SearchEngine } from './client';
import { SEARCH_COLLECTIONS, type SearchCollection } from './collections';

/**
 * Every collection's documents share one shape (search/documents.ts), so one search can span
 * them and facet them alike. Only core features: the local engine has no analysis-common
 * module (README, Search), so prefixes come from `index_prefixes` and type-ahead from a
 * completion field whose `tenant` context keeps each tenant's suggestions its own.
 */
const mappings: estypes.MappingTypeMapping = {
  dynamic: 'strict',
  properties: {
    tenant_id: { type: 'keyword' },
    collection: { type: 'keyword' },
    key: { type: 'keyword' },
    title: {
      type: 'text',
      index_prefixes: { min_chars: 1, max_chars: 10 },
      fields: { raw: { type: 'keyword', ignore_above: 256 } },
    },
    description: { type: 'text' },
    type: { type: 'keyword' },
    lifecycle: { type: 'keyword' },
    owner: { type: 'keyword' },
    tier: { type: 'keyword' },
    tags: { type: 'keyword' },
    updated_at: { type: 'date' },
    // `standard`, not the completion field's default `simple`, which drops digits: with it
    // `ledger42` suggested `ledger97`.
    suggest: {
      type: 'completion',
      analyzer: 'standard',
      contexts: [{ name: 'tenant', type: 'category', path: 'tenant_id' }],
    },
  },
};

/**
 * Entities add what cluster agents reported of their present workloads (search/documents.ts
 * EntityDocument): workloads are never documents of their own; and their scorecard grade.
 */
const entityMappings: estypes.MappingTypeMapping = {
  ...mappings,
  properties: {
    ...mappings.properties,
    kubernetes: {
      properties: { clusters: { type: 'keyword' }, namespaces: { type: 'keyword' }, images: { type: 'keyword' } },
    },
    grade: { type: 'keyword' },
  },
};

/** Documentation files add their repository, path and text (search/documents.ts DocDocument). */
const docsMappings: estypes.MappingTypeMapping = {
  ...mappings,
  properties: {
    ...mappings.properties,
    repository: { type: 'keyword' },
    path: { type: 'keyword' },
    content: { type: 'text' },
  },
};

/**
 * Bump a version when its definition changes: the new index is created beside the old one,
 * and the alias readers use keeps pointing at the old one until the new one is filled.
 */
export const INDEX_DEFINITIONS: Record<SearchCollection, { version: number; mappings: estypes.MappingTypeMapping }> = {
  entities: { version: 4, mappings: entityMappings },
  repositories: { version: 2, mappings },
  molds: { version: 2, mappings },
  users: { version: 2, mappings },
  teams: { version: 2, mappings },
  docs: { version: 2, mappings: docsMappings },
};

/** The alias every read and write goes through. */
export const aliasOf = (engine: SearchEngine, collection: SearchCollection) => `${engine.indexPrefix}_${collection}`;

/** The index the current definition lives in. */
export const versionedIndexOf = (engine: SearchEngine, collection: SearchCollection) =>
  `${aliasOf(engine, collection)}_v${INDEX_DEFINITIONS[collection].version}`;

/**
 * Creates each collection's current index where it is missing, with its alias when the alias
 * does not exist yet. Idempotent, and safe when several processes start at once.
 */
export async function ensureIndices(engine: SearchEngine): Promise<void> {
  for (const collection of SEARCH_COLLECTIONS) {
    const index = versionedIndexOf(engine, collection);
    if (await engine.client.indices.exists({ index })) continue;
    const alias = aliasOf(engine, collection);
    const aliasTaken = await engine.client.indices.existsAlias({ name: alias });
    try {
      await engine.client.indices.create({
        index,
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: INDEX_DEFINITIONS[collection].mappings,
        ...(!aliasTaken && { aliases: { [alias]: { is_write_index: true } } }),
      });
    } catch (err) {
      if ((err as { body?: { error?: { type?: string } } }).body?.error?.type !== 'resource_already_exists_exception')
        throw err;
    }
  }
}
