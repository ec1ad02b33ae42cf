import type { estypes } from '@elastic/elasticsearch';
import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import { shipyardSearchAttributes, SINGLETON_KEY, workflowId } from '../core/searchAttributes';
import { TASK_QUEUES } from '../core/taskQueues';
import type { SearchEngine } from './client';
import { OUTBOX_COLLECTIONS, SEARCH_COLLECTIONS, type SearchCollection } from './collections';
import { INDEX_WRITER_LOCK, writeToIndex, type IndexChange, type OnRefused } from './bulk';
import { loadDocumentsAfter, type SearchDocument } from './documents';
import { aliasOf, ensureIndices, versionedIndexOf } from './indices';

// A changed index definition (search/indices.ts) is a new index version. The writers create its
// index beside the old one and keep writing through the alias, which still points at the old
// one; this fills the new index and moves the alias, with no downtime for readers. A Temporal
// workflow on the search pool (workflows/searchReindex.ts) runs it, one collection per activity;
// each search worker start asks for it when a collection is behind (one at a time: a fixed id).

export const REINDEX_WORKFLOW_ID = workflowId('search-reindex', SINGLETON_KEY);
const FILL_BATCH = 1_000;

/** The contract the search workers start the workflow by. */
export type SearchReindexWorkflow = () => Promise<{ collections: SearchCollection[]; documents: number }>;

/** The indices `collection`'s alias points at now (none before the first write created it). */
async function aliasedIndices(engine: SearchEngine, collection: SearchCollection): Promise<string[]> {
  const aliases = await engine.client.indices.getAlias({ name: aliasOf(engine, collection) }, { ignore: [404] });
  return Object.keys(aliases).filter((index) => index !== 'error' && index !== 'status');
}

/** The collections whose alias is not on their current index version. */
export async function collectionsToReindex(engine: SearchEngine): Promise<SearchCollection[]> {
  await ensureIndices(engine);
  const behind: SearchCollection[] = [];
  for (const collection of SEARCH_COLLECTIONS) {
    if (!(await aliasedIndices(engine, collection)).includes(versionedIndexOf(engine, collection))) {
      behind.push(collection);
    }
  }
  return behind;
}

/** Starts the reindex when a collection is behind its definition; one already running is left alone. */
export async function startReindexIfBehind(temporal: TemporalClient, engine: SearchEngine): Promise<boolean> {
  if (!(await collectionsToReindex(engine)).length) return false;
  await temporal.workflow
    .start<SearchReindexWorkflow>('searchReindex', {
      taskQueue: TASK_QUEUES.search,
      workflowId: REINDEX_WORKFLOW_ID,
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'search-reindex' }),
    })
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
  return true;
}

const isOutboxCollection = (collection: SearchCollection): collection is (typeof OUTBOX_COLLECTIONS)[number] =>
  (OUTBOX_COLLECTIONS as readonly string[]).includes(collection);

/**
 * Fills `collection`'s current index and moves its alias there in one atomic call, then deletes
 * the old index. Readers use the alias throughout: they read the old index until the swap and
 * the new one after it. It holds the index writer lock from start to end, so no write lands in
 * the old index after its document was copied: the outbox drain stands by (API writes queue in
 * the outbox meanwhile, and reach the new index after the swap), and the crawler and backfill
 * wait. The documents come from the database, except documentation, which only the engine has:
 * it is copied from the old index. A retry after the swap finds nothing to do. Documents the new
 * definition refuses go to `onRefused` and are left out.
 */
export async function reindexCollection(
  system: Knex,
  engine: SearchEngine,
  collection: SearchCollection,
  { heartbeat = () => {}, onRefused }: { heartbeat?: () => void; onRefused?: OnRefused } = {},
): Promise<{ documents: number }> {
  await ensureIndices(engine);
  return system.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [INDEX_WRITER_LOCK]);
    const target = versionedIndexOf(engine, collection);
    const old = await aliasedIndices(engine, collection);
    if (old.includes(target)) return { documents: 0 };
    const write: WriteBatch = async (changes) => {
      const refused = await writeToIndex(engine, changes, { index: target, onRefused });
      heartbeat();
      return changes.length - refused.length;
    };
    const documents = isOutboxCollection(collection)
      ? await fillFromDatabase(trx, collection, write)
      : await copyIndex(engine, aliasOf(engine, collection), write);
    // Searchable before readers move to it, not at the engine's next periodic refresh.
    await engine.client.indices.refresh({ index: target });
    const alias = aliasOf(engine, collection);
    await engine.client.indices.updateAliases({
      actions: [
        ...old.map((index) => ({ remove: { index, alias } })),
        { add: { index: target, alias, is_write_index: true } },
      ],
    });
    if (old.length) await engine.client.indices.delete({ index: old });
    return { documents };
  });
}

/** Writes a batch into the new index; resolves with the documents it took. */
type WriteBatch = (changes: IndexChange[]) => Promise<number>;

async function fillFromDatabase(
  trx: Knex,
  collection: (typeof OUTBOX_COLLECTIONS)[number],
  write: WriteBatch,
): Promise<number> {
  let documents = 0;
  for (let afterId: string | null = null; ;) {
    const batch = await loadDocumentsAfter(trx, collection, afterId, FILL_BATCH);
    documents += await write(batch.map(({ id, document }) => ({ collection, id, document })));
    if (batch.length < FILL_BATCH) return documents;
    afterId = batch[batch.length - 1].id;
  }
}

/** Copies every document of `source` (an alias; none when it does not exist) into `target`, through a point in time. */
async function copyIndex(engine: SearchEngine, source: string, write: WriteBatch): Promise<number> {
  if (!(await engine.client.indices.exists({ index: source }))) return 0;
  const pit = await engine.client.openPointInTime({ index: source, keep_alive: '2m' });
  let documents = 0;
  try {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const page = await engine.client.search<SearchDocument>({
        pit: { id: pit.id, keep_alive: '2m' },
        size: FILL_BATCH,
        sort: [{ _shard_doc: 'asc' }],
        ...(after && { search_after: after }),
      });
      const hits = page.hits.hits;
      documents += await write(
        hits.map((hit) => ({ collection: hit._source!.collection, id: hit._id!, document: hit._source! })),
      );
      if (hits.length < FILL_BATCH) return documents;
      after = hits[hits.length - 1].sort;
    }
  } finally {
    await engine.client.closePointInTime({ id: pit.id }).catch(() => undefined);
  }
}
