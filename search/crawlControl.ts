import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../core/config';
import type { RecurringWorkflow } from '../core/schedules';
import { shipyardSearchAttributes, workflowId } from '../core/searchAttributes';
import { resetForRecrawl } from '../core/repositories/store';
import { TASK_QUEUES } from '../core/taskQueues';
import {
  CRAWL_TICK_SCHEDULE_ID,
  pushCrawlWorkflowId,
  REPOSITORY_PUSHED_SIGNAL,
  type CrawlTickWorkflow,
  type PushCrawlWorkflow,
  type SearchCrawlWorkflow,
} from './crawl';

/**
 * Starts a crawl of the tenant on the search pool (recrawl's step 3). `operationId` is the
 * workflow id, so the operation can be found in the Temporal UI by what the API answered.
 */
export async function startCrawl(temporal: TemporalClient, tenantId: string, operationId: string): Promise<void> {
  await temporal.workflow.start<SearchCrawlWorkflow>('searchCrawl', {
    taskQueue: TASK_QUEUES.search,
    workflowId: operationId,
    args: [{ tenantId }],
    typedSearchAttributes: shipyardSearchAttributes({ kind: 'search-crawl', tenantId }),
  });
}

/** The search pool's fallback tick: every `crawl.tickMs`, a crawl of every tenant's due repositories. */
export function crawlTickSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: CRAWL_TICK_SCHEDULE_ID,
    workflowType: 'crawlTick',
    pool: 'search',
    everyMs: config.crawl.tickMs,
    args: [] satisfies Parameters<CrawlTickWorkflow>,
    kind: 'search-crawl-tick',
  };
}

export interface RecrawlAccepted {
  message: string;
  scope: 'tenant' | 'filtered';
  repositories?: string[];
  reset_documents: number;
  reset_repositories: number;
  operation_id: string;
  /** The tenant's recrawl was already running: `operation_id` is that one's. */
  already_running?: boolean;
  trigger_error?: string;
}

/**
 * One workflow id per tenant: Temporal runs at most one workflow per id at a time, so a tenant
 * has at most one recrawl running however often it asks, and a later one reuses the id.
 */
export const recrawlOperationId = (tenantId: string) => workflowId('search-crawl', tenantId);

/**
 * POST /admin/recrawl, the spec's steps in order: the reset (documents not indexed, repositories
 * due now) in one transaction under the caller's tenant, then the crawl's start. A reset that
 * fails fails the call (500); a start that fails does not: the reset stands and the hourly tick
 * crawls what it made due, which `trigger_error` says. While the tenant's recrawl runs, no
 * second one starts: the call answers with the running one (`already_running`), and what the
 * running crawl has passed already stays due for the next.
 */
export async function recrawl(
  temporal: TemporalClient,
  inTenant: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>,
  tenantId: string,
  repositories: string[] | undefined,
): Promise<RecrawlAccepted> {
  const reset = await inTenant((trx) => resetForRecrawl(trx, repositories));
  const operationId = recrawlOperationId(tenantId);
  const { alreadyRunning, triggerError }: { alreadyRunning: boolean; triggerError?: string } = await startCrawl(
    temporal,
    tenantId,
    operationId,
  ).then(
    () => ({ alreadyRunning: false }),
    (err: Error) =>
      err instanceof WorkflowExecutionAlreadyStartedError
        ? { alreadyRunning: true }
        : { alreadyRunning: false, triggerError: err.message || String(err) },
  );
  return {
    message: triggerError
      ? 'Recrawl reset committed; the crawl could not be started and will run at the next scheduled tick'
      : alreadyRunning
        ? 'Recrawl already running; reset committed, and what that crawl has passed is crawled by the next'
        : 'Recrawl started',
    scope: repositories ? 'filtered' : 'tenant',
    ...(repositories && { repositories }),
    reset_documents: reset.documents,
    reset_repositories: reset.repositories,
    operation_id: operationId,
    ...(alreadyRunning && { already_running: true }),
    ...(triggerError && { trigger_error: triggerError }),
  };
}

/**
 * Has the tenant's push crawl (one run per tenant) crawl `repositoryId`: started with it, or,
 * when it runs, told of it by signal. Ids only: the workflow reads the rest.
 */
export async function crawlPushedRepository(
  temporal: TemporalClient,
  tenantId: string,
  repositoryId: string,
): Promise<void> {
  await temporal.workflow.signalWithStart<PushCrawlWorkflow, [string]>('searchCrawlPushes', {
    taskQueue: TASK_QUEUES.search,
    workflowId: pushCrawlWorkflowId(tenantId),
    args: [{ tenantId, repositoryIds: [repositoryId] }],
    signal: REPOSITORY_PUSHED_SIGNAL,
    signalArgs: [repositoryId],
    typedSearchAttributes: shipyardSearchAttributes({ kind: 'search-crawl-pushes', tenantId }),
  });
}
