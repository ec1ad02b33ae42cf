import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { SearchActivities } from '../activities/search';
import type {
  BackfillBatch,
  BackfillInput,
  BackfillProgress,
  BackfillResult,
  SearchBackfillWorkflow,
} from '../search/backfill';

const { backfillBatch } = proxyActivities<SearchActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5 },
});

// The query's name; search/backfill.ts exports the same (BACKFILL_PROGRESS_QUERY) for the API.
export const progressQuery = defineQuery<BackfillProgress>('progress');

/**
 * Rebuilds the search indices from the database, one collection after the other, up to 10,000
 * rows per activity (search/backfill.ts). Its progress (rows read and documents indexed per
 * collection) answers the `progress` query while it runs and is its result. Only counts and ids
 * enter history: ~3 events per 10,000 rows, so a catalog of millions fits one run without
 * continue-as-new.
 */
export async function searchBackfill({ collections }: BackfillInput): Promise<BackfillResult> {
  const progress: BackfillProgress = Object.fromEntries(
    collections.map((collection) => [collection, { read: 0, indexed: 0, done: false }]),
  );
  setHandler(progressQuery, () => progress);
  for (const collection of collections) {
    const counts = progress[collection]!;
    let afterId: string | null = null;
    do {
      const batch: BackfillBatch = await backfillBatch({ collection, afterId });
      counts.read += batch.read;
      counts.indexed += batch.indexed;
      afterId = batch.lastId;
    } while (afterId !== null);
    counts.done = true;
  }
  return { progress };
}

searchBackfill satisfies SearchBackfillWorkflow;
