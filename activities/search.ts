import { Context } from '@temporalio/activity';
import type { RefusedDocument } from '../search/bulk';
import { tenantsToCrawl } from '../core/repositories/store';
import { backfillBatch, type BackfillBatch, type BackfillBatchInput } from '../search/backfill';
import { crawlRepository, syncTenant, type CrawlInput, type RepositoryCrawl } from '../search/crawl';
import type { SearchCollection } from '../search/collections';
import { collectionsToReindex, reindexCollection } from '../search/reindex';
import type { ActivityDeps } from './deps';

/** Documents the engine refused: in the worker's log, never in workflow history (they name tenant data). */
const logRefused = (refused: RefusedDocument[]) =>
  Context.current().log.warn('the search engine refused documents: left out of the index', { refused });

export function createSearchActivities(deps: ActivityDeps) {
  return {
    /** One keyset batch of a backfill; only counts and the next position enter history. */
    backfillBatch: (input: BackfillBatchInput): Promise<BackfillBatch> =>
      backfillBatch(deps.system, deps.search, input, logRefused),
    /** The tenant's repository list brought up to date; the ids of those due for a crawl. */
    syncTenant: ({ tenantId }: CrawlInput) => syncTenant(deps, tenantId),
    crawlRepository: ({ tenantId, repositoryId }: CrawlInput & { repositoryId: string }): Promise<RepositoryCrawl> =>
      crawlRepository({ ...deps, onRefused: logRefused }, tenantId, repositoryId),
    /** The tenants the fallback tick crawls (read through the system role). */
    tenantsToCrawl: (): Promise<string[]> => tenantsToCrawl(deps.system),
    collectionsToReindex: (): Promise<SearchCollection[]> => collectionsToReindex(deps.search),
    /** One collection moved to its new index version, heartbeating after each batch. */
    reindexCollection: ({ collection }: { collection: SearchCollection }) =>
      reindexCollection(deps.system, deps.search, collection, {
        heartbeat: () => Context.current().heartbeat(),
        onRefused: logRefused,
      }),
  };
}

export type SearchActivities = ReturnType<typeof createSearchActivities>;
