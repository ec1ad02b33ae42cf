import { proxyActivities } from '@temporalio/workflow';
import type { SearchActivities } from '../activities/search';
import type { SearchReindexWorkflow } from '../search/reindex';
import type { SearchCollection } from '../search/collections';

const { collectionsToReindex } = proxyActivities<SearchActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});
// One fill per activity, which heartbeats after each batch: a worker lost mid-fill is noticed
// within a minute and the fill starts over (the lock it held went with its connection).
const { reindexCollection } = proxyActivities<SearchActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/** Moves every collection whose definition changed to its new index version, one after the other. */
export async function searchReindex(): Promise<{ collections: SearchCollection[]; documents: number }> {
  const collections = await collectionsToReindex();
  let documents = 0;
  for (const collection of collections) documents += (await reindexCollection({ collection })).documents;
  return { collections, documents };
}

searchReindex satisfies SearchReindexWorkflow;
