import type { Knex } from 'knex';
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
export const BACKFILL_WORKFLOW_ID = 'search-backfill';
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
 * Writes the next batch of a collection's documents. It holds the index writer lock while it
 * reads and writes, so the outbox drain never lands an older read after this one's (or the
 * reverse). Written documents overwrite; nothing is deleted. Documents the engine refuses for
 * their content go to `onRefused` and are not counted as indexed; the backfill goes on.
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
    const batch = await loadDocumentsAfter(trx, source, afterId, BACKFILL_BATCH_SIZE);
    const refused = await writeToIndex(
      engine,
      batch.map(({ id, document }) => ({ collection: source, id, document })),
      { onRefused },
    );
    return {
      read: batch.length,
      indexed: batch.length - refused.length,
      lastId: batch.length < BACKFILL_BATCH_SIZE ? null : batch[batch.length - 1].id,
    };
  });
}
