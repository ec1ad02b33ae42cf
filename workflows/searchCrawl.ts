import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  continueAsNew,
  defineSignal,
  executeChild,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchActivities } from '../activities/search';
import { shipyardSearchAttributes, workflowId } from '../core/searchAttributes';
import type {
  CrawlInput,
  CrawlResult,
  CrawlTickWorkflow,
  PushCrawlInput,
  PushCrawlWorkflow,
  RepositoryPushedSignal,
  SearchCrawlWorkflow,
} from '../search/crawl';

const { syncTenant, crawlRepository } = proxyActivities<SearchActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5 },
});
const { tenantsToCrawl } = proxyActivities<SearchActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/** Repositories crawled side by side: the host's rate limits and the engine's bulk queue stay calm. */
const PARALLEL_REPOSITORIES = 4;

/**
 * One tenant's crawl: the repository list first, then every due repository, a few at a time,
 * one activity each. Counts are its result; the tenant's repository names never enter history
 * (the activities pass ids, and the payload codec seals what does).
 */
export async function searchCrawl({ tenantId }: CrawlInput): Promise<CrawlResult> {
  const { due, removed, sync_error } = await syncTenant({ tenantId });
  const result: CrawlResult = {
    repositories: due.length,
    crawled: 0,
    failed: 0,
    indexed: 0,
    unchanged: 0,
    removed,
    ...(sync_error && { sync_error }),
  };
  for (let i = 0; i < due.length; i += PARALLEL_REPOSITORIES) {
    const crawls = await Promise.all(
      due.slice(i, i + PARALLEL_REPOSITORIES).map((repositoryId) => crawlRepository({ tenantId, repositoryId })),
    );
    for (const crawl of crawls) {
      result[crawl.status] += 1;
      result.indexed += crawl.indexed;
      result.unchanged += crawl.unchanged;
      result.removed += crawl.removed;
    }
  }
  return result;
}

/**
 * The fallback tick (the `shipyard-crawl-tick` schedule): a crawl of every tenant with an
 * active source-host integration, one after the other, each its own child workflow (so each
 * carries its tenant's search attribute in the Web UI).
 */
export async function crawlTick(): Promise<{ tenants: number }> {
  const tenants = await tenantsToCrawl();
  for (const tenantId of tenants) {
    // The id of the tenant's recrawl too: while one runs, it crawls what is due, and the tick
    // goes on to the next tenant.
    await executeChild(searchCrawl, {
      workflowId: workflowId('search-crawl', tenantId),
      args: [{ tenantId }],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'search-crawl', tenantId }),
    }).catch((err: unknown) => {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
  }
  return { tenants: tenants.length };
}

export const repositoryPushedSignal = defineSignal<[string]>('repository-pushed' satisfies RepositoryPushedSignal);

/**
 * Repositories one run crawls before it continues as new, keeping its history short (sooner when
 * Temporal suggests it: a flood of signals for repositories already waiting crawls nothing).
 */
const CRAWLS_PER_RUN = 200;

/**
 * The tenant's push crawl (search/crawl.ts, PushCrawlWorkflow): the repositories pushed, a few
 * at a time like the tenant's crawl, so one tenant's pushes hold at most PARALLEL_REPOSITORIES
 * of the search pool's slots. A repository pushed again while it is crawled goes back into the
 * set and is crawled once more after; one pushed twice while it waits is crawled once.
 */
export async function searchCrawlPushes({ tenantId, repositoryIds }: PushCrawlInput): Promise<{ crawled: number }> {
  const pending = new Set(repositoryIds);
  setHandler(repositoryPushedSignal, (repositoryId) => {
    pending.add(repositoryId);
  });
  let crawled = 0;
  while (pending.size) {
    if (crawled >= CRAWLS_PER_RUN || workflowInfo().continueAsNewSuggested)
      await continueAsNew<PushCrawlWorkflow>({ tenantId, repositoryIds: [...pending] });
    const batch = [...pending].slice(0, PARALLEL_REPOSITORIES);
    for (const repositoryId of batch) pending.delete(repositoryId);
    await Promise.all(batch.map((repositoryId) => crawlRepository({ tenantId, repositoryId })));
    crawled += batch.length;
  }
  return { crawled };
}

searchCrawl satisfies SearchCrawlWorkflow;
searchCrawlPushes satisfies PushCrawlWorkflow;
crawlTick satisfies CrawlTickWorkflow;
