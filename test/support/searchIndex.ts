import type { Knex } from 'knex';
import { createPool } from '../../db/pool';
import { createSearchEngine, type SearchEngine } from '../../search/client';
import type { SearchCollection } from '../../search/collections';
import { aliasOf, ensureIndices } from '../../search/indices';
import { drainOutboxBatch } from '../../search/outbox';
import { testConfig } from './harness';

/**
 * The real engine for a suite, and the outbox drain run on demand: `drainAll` makes every write
 * so far searchable (other suites' too), so a test decides when documents arrive.
 */
export function useSearchIndex() {
  const config = testConfig();
  const index = {} as { system: Knex; engine: SearchEngine };
  beforeAll(async () => {
    index.system = createPool(config.database.systemUrl, 2);
    index.engine = createSearchEngine(config);
    await ensureIndices(index.engine);
  });
  afterAll(async () => {
    await index.system?.destroy();
    await index.engine?.client.close();
  });

  async function drainAll(): Promise<void> {
    while ((await drainOutboxBatch(index.system, index.engine, 500)) > 0);
    await index.engine.client.indices.refresh({ index: `${config.elasticsearch.indexPrefix}_*` });
  }

  /** The document as the engine holds it; undefined when it has none. */
  async function indexed(collection: SearchCollection, id: string) {
    const res = await index.engine.client.get({ index: aliasOf(index.engine, collection), id }, { ignore: [404] });
    return res.found ? (res._source as Record<string, unknown>) : undefined;
  }

  return { index, drainAll, indexed };
}
