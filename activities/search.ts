import { Context } from '@temporalio/activity';
import { tenantsToCrawl } from '../core/repositories/store';
import { backfillBatch, type BackfillBatch, type BackfillBatchInput } from '../search/backfill';
import { crawlRepository, syncTenant, type CrawlInput, type RepositoryCrawl } from '../search/crawl';
import type { SearchCollection } from '../search/collections';
import { collectionsToReindex, reindexCollection } from '../search/reindex';
import type { ActivityDeps } from './deps';

export function createSearchActivities(deps: ActivityDeps) {
  return {
    /** One keyset batch of a backfill; only counts and the next position enter history. */
    backfillBatch: (input: BackfillBatchInput): Promise<BackfillBatch> =>
      backfillBatch(deps.system, deps.search, input),
    /** The tenant's repository list brought up to date; the ids of those due for a crawl. */
    syncTenant: ({ tenantId }: CrawlInput) => syncTenant(deps, tenantId),
    crawlRepository: ({ tenantId, repositoryId }: CrawlInput & { repositoryId: string }): Promise<RepositoryCrawl> =>
      crawlRepository(deps, tenantId, repositoryId),
    /** The tenants the fallback tick crawls (read through the system role). */
    tenantsToCrawl: (): Promise<string[]> => tenantsToCrawl(deps.system),
    collectionsToReindex: (): Promise<SearchCollection[]> => collectionsToReindex(deps.search),
    /** One collection moved to its new index version, heartbeating after each batch. */
    reindexCollection: ({ collection }: { collection: SearchCollection }) =>
      reindexCollection(deps.system, deps.search, collection, () => Context.current().heartbeat()),
  };
}

export type SearchActivities = ReturnType<typeof createSearchActivities>;
