import type { Knex } from 'knex';
import { SINGLETON_KEY, workflowId } from '../core/searchAttributes';
import type { SearchEngine } from './client';
import type { OutboxCollection } from './collections';
import { INDEX_WRITER_LOCK, writeToIndex, type OnRefused } from './bulk';
import { loadDocumentsAfter } from './documents';
import { ensureIndices } from './indices';

// Backfill rebuilds the search indices from the database (the spec's "Search index operations"):
// every tenant's rows, read through the system role in keyset batches, written with `_bulk`,
// never deleting. A Temporal workflow on the search pool (workflows/searchBackfill.ts) runs it
// batch by batch; this module is its contract and its batch.

/** The collections POST /admin/backfill accepts, in the order it processes them. */
export const BACKFILL_COLLECTIONS = ['entities', 'repositories', 'molds', 'users', 'teams'] as const;
export type BackfillCollection = (typeof BACKFILL_COLLECTIONS)[number];

/**
 * Where each collection's documents come from. Users and teams are indexed live through the
 * outbox, so backfill has nothing to do for them (spec, data ownership rule 4).
 */
const SOURCES: Record<BackfillCollection, OutboxCollection | null> = {
  entities: 'entities',
  repositories: 'repositories',
  molds: 'molds',
  users: null,
  teams: null,
};

/** One backfill at a time: a fixed workflow id, so a second start while one runs is refused. */
export const BACKFILL_WORKFLOW_ID = workflowId('search-backfill', SINGLETON_KEY);
export const BACKFILL_PROGRESS_QUERY = 'progress';
export const BACKFILL_BATCH_SIZE = 1_000;

export interface CollectionProgress {
  /** Rows read from the database. */
  read: number;
  /** Documents the engine acknowledged. */
  indexed: number;
  done: boolean;
}

export type BackfillProgress = Partial<Record<BackfillCollection, CollectionProgress>>;

export interface BackfillInput {
  collections: BackfillCollection[];
}

export interface BackfillResult {
  progress: BackfillProgress;
}

/** The contract the API starts the workflow by (it never imports workflows/). */
export type SearchBackfillWorkflow = (input: BackfillInput) => Promise<BackfillResult>;

export interface BackfillBatchInput {
  collection: BackfillCollection;
  /** The last id of the previous batch; null for the first. */
  afterId: string | null;
}

export interface BackfillBatch {
  read: number;
  indexed: number;
  /** The last id read, where the next batch starts; null when the collection is exhausted. */
  lastId: string | null;
}

/**
 * Rows one activity takes on: ten bulk requests of BACKFILL_BATCH_SIZE. With one request per
 * activity, the backfill spent ~30 ms a batch beyond its read and its bulk (the activity's tasks
 * and transaction), a third of its time.
 */
export const BACKFILL_ROWS_PER_ACTIVITY = 10 * BACKFILL_BATCH_SIZE;

/**
 * Writes a collection's next documents, up to BACKFILL_ROWS_PER_ACTIVITY, in bulk requests of
 * BACKFILL_BATCH_SIZE; each batch is read from the database while the engine takes the one
 * before (the read is about a quarter of the bulk's time). It holds the index writer lock
 * throughout, so the outbox drain never lands an older read after this one's (or the reverse).
 * Written documents overwrite; nothing is deleted. Documents the engine refuses for their
 * content go to `onRefused` and are not counted as indexed; the backfill goes on.
 */
export async function backfillBatch(
  system: Knex,
  engine: SearchEngine,
  { collection, afterId }: BackfillBatchInput,
  onRefused?: OnRefused,
): Promise<BackfillBatch> {
  const source = SOURCES[collection];
  if (!source) return { read: 0, indexed: 0, lastId: null };
  if (afterId === null) await ensureIndices(engine);
  return system.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [INDEX_WRITER_LOCK]);
    const readAfter = (id: string | null) => loadDocumentsAfter(trx, source, id, BACKFILL_BATCH_SIZE);
    let read = 0;
    let indexed = 0;
    let batch = await readAfter(afterId);
    for (;;) {
      read += batch.length;
      // A short batch is the collection's last.
      const lastId = batch.length < BACKFILL_BATCH_SIZE ? null : batch[batch.length - 1].id;
      const [refused, next] = await Promise.all([
        writeToIndex(
          engine,
          batch.map(({ id, document }) => ({ collection: source, id, document })),
          { onRefused },
        ),
        lastId !== null && read < BACKFILL_ROWS_PER_ACTIVITY ? readAfter(lastId) : undefined,
      ]);
      indexed += batch.length - refused.length;
      if (!next) return { read, indexed, lastId };
      batch = next;
    }
  });
}
