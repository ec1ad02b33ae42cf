import { randomUUID } from 'node:crypto';
import { createSearchEngine, type SearchEngine } from '../../search/client';
import { aliasOf, ensureIndices, INDEX_DEFINITIONS, versionedIndexOf } from '../../search/indices';
import { collectionsToReindex, reindexCollection } from '../../search/reindex';
import { useCatalogSuite } from '../support/catalogSuite';
import { testConfig } from '../support/harness';
import { useSearchIndex } from '../support/searchIndex';

// A changed index definition moves a collection to a new index behind its alias, filled from
// the database (or, for documentation, from the old index), with readers served throughout.
// Its own index prefix: the other suites' indices are not touched.

const { suite, createEntity, uniqueId } = useCatalogSuite();
const { index } = useSearchIndex();
let engine: SearchEngine;

beforeAll(() => {
  const config = testConfig();
  engine = createSearchEngine({
    ...config,
    elasticsearch: { ...config.elasticsearch, indexPrefix: `${config.elasticsearch.indexPrefix}_reindex_${suite.run}` },
  });
});
afterAll(async () => {
  await engine.client.indices.delete({ index: `${engine.indexPrefix}_*` }, { ignore: [404] });
  await engine.client.close();
});

/** Plays an older release: `collection` lives in a `_v0` index (with these documents) behind its alias. */
async function olderVersion(collection: 'entities' | 'docs', documents: Record<string, Record<string, unknown>>) {
  const alias = aliasOf(engine, collection);
  await engine.client.indices.create({
    index: `${alias}_v0`,
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: INDEX_DEFINITIONS[collection].mappings,
    aliases: { [alias]: { is_write_index: true } },
  });
  const written = await engine.client.bulk({
    refresh: true,
    operations: Object.entries(documents).flatMap(([id, document]) => [
      { index: { _index: alias, _id: id } },
      document,
    ]),
  });
  expect(written.errors).toBe(false);
}

test('a collection behind its definition is filled into the new version and its alias moved, readers served throughout', async () => {
  const entity = await createEntity({ name: uniqueId('Reindexed') });
  const docId = randomUUID();
  const common = {
    tenant_id: suite.adminA.tenantId,
    collection: 'docs',
    key: 'acme/site/README.md',
    title: 'Site',
    description: null,
    type: 'readme',
    lifecycle: null,
    owner: 'acme',
    tier: null,
    tags: [],
    updated_at: null,
    suggest: { input: ['Site'], contexts: { tenant: [suite.adminA.tenantId] } },
  };
  const doc = {
    ...common,
    repository: 'acme/site',
    path: 'README.md',
    content: 'only the engine has this',
  };
  // The old entities index holds the entity as an older release wrote it.
  await olderVersion('entities', {
    [entity.id]: { ...common, collection: 'entities', key: entity.service_id, title: 'old' },
  });
  await olderVersion('docs', { [docId]: doc });
  await ensureIndices(engine); // what every writer does at its start: the new versions appear beside
  expect((await collectionsToReindex(engine)).sort()).toEqual(['docs', 'entities']);

  // A reader of the alias the whole time: it must find both documents at every moment.
  let reading = true;
  let reads = 0;
  const misses: string[] = [];
  const reader = (async () => {
    while (reading) {
      for (const [collection, id] of [
        ['entities', entity.id],
        ['docs', docId],
      ] as const) {
        const found = await engine.client.search({
          index: aliasOf(engine, collection),
          query: { ids: { values: [id] } },
        });
        if (found.hits.hits.length !== 1) misses.push(`${collection} after ${reads} reads`);
      }
      reads += 1;
    }
  })();
  const entities = await reindexCollection(index.system, engine, 'entities');
  const docs = await reindexCollection(index.system, engine, 'docs');
  await engine.client.indices.refresh({ index: `${engine.indexPrefix}_*` });
  reading = false;
  await reader;

  expect(misses).toEqual([]);
  expect(reads).toBeGreaterThan(0);
  expect(docs.documents).toBe(1);
  expect(entities.documents).toBeGreaterThanOrEqual(1);
  for (const collection of ['entities', 'docs'] as const) {
    const aliases = await engine.client.indices.getAlias({ name: aliasOf(engine, collection) });
    expect(Object.keys(aliases)).toEqual([versionedIndexOf(engine, collection)]);
    expect(await engine.client.indices.exists({ index: `${aliasOf(engine, collection)}_v0` })).toBe(false);
  }
  // Filled from the database: the entity as it is now, not as the old index had it.
  const filled = await engine.client.get({ index: aliasOf(engine, 'entities'), id: entity.id });
  expect(filled._source).toMatchObject({ title: entity.name, tenant_id: suite.adminA.tenantId });
  const copied = await engine.client.get({ index: aliasOf(engine, 'docs'), id: docId });
  expect(copied._source).toMatchObject({ content: 'only the engine has this' });

  // Done: nothing is behind, and a second run changes nothing.
  expect(await collectionsToReindex(engine)).toEqual([]);
  expect(await reindexCollection(index.system, engine, 'docs')).toEqual({ documents: 0 });
}, 120_000);
