import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client as TemporalClient,
} from '@temporalio/client';
import { ApiError, conflict } from '../core/errors';
import { shipyardSearchAttributes } from '../core/searchAttributes';
import { TASK_QUEUES } from '../core/taskQueues';
import {
  BACKFILL_PROGRESS_QUERY,
  BACKFILL_WORKFLOW_ID,
  type BackfillCollection,
  type BackfillProgress,
  type BackfillResult,
  type SearchBackfillWorkflow,
} from './backfill';

// POST /admin/backfill and its status. The status lives in Temporal, not in the API process:
// it survives an API restart, and every API replica reports the same backfill.

/** How long the status waits for the search worker to answer the progress query. */
const PROGRESS_QUERY_MS = 3_000;

const temporalDown = (err: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', `Temporal did not answer: ${(err as Error).message}`, [], { 'Retry-After': '5' });

/** Starts the backfill workflow; a 409 while one runs (its id is fixed). */
export async function startBackfill(
  temporal: TemporalClient,
  collections: BackfillCollection[],
): Promise<{ collections: BackfillCollection[]; started_at: string }> {
  try {
    await temporal.workflow.start<SearchBackfillWorkflow>('searchBackfill', {
      taskQueue: TASK_QUEUES.search,
      workflowId: BACKFILL_WORKFLOW_ID,
      args: [{ collections }],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'search-backfill' }),
      memo: { collections },
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw conflict('A backfill is already running');
    throw temporalDown(err);
  }
  return { collections, started_at: new Date().toISOString() };
}

export interface BackfillStatus {
  status: 'idle' | 'running' | 'completed' | 'failed';
  collections: BackfillCollection[];
  /** Per collection: rows read, documents indexed, done. */
  progress: BackfillProgress;
  started_at: string | null;
  duration_seconds: number;
  completed_at?: string;
  error?: string;
}

const IDLE: BackfillStatus = { status: 'idle', collections: [], progress: {}, started_at: null, duration_seconds: 0 };

/** The latest backfill as Temporal knows it; `idle` when none ever ran. */
export async function backfillStatus(temporal: TemporalClient): Promise<BackfillStatus> {
  const handle = temporal.workflow.getHandle<SearchBackfillWorkflow>(BACKFILL_WORKFLOW_ID);
  const description = await handle.describe().catch((err) => {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw temporalDown(err);
  });
  if (!description) return IDLE;
  const collections = (description.memo?.collections ?? []) as BackfillCollection[];
  const started = description.startTime;
  const ended = description.closeTime;
  const base = {
    collections,
    started_at: started.toISOString(),
    duration_seconds: Math.round(((ended ?? new Date()).getTime() - started.getTime()) / 100) / 10,
  };
  const zero: BackfillProgress = Object.fromEntries(
    collections.map((collection) => [collection, { read: 0, indexed: 0, done: false }]),
  );
  switch (description.status.name) {
    case 'RUNNING':
    case 'CONTINUED_AS_NEW': {
      // Before the worker's first task, or with no search worker up, there is no answer yet.
      const progress = await temporal.connection
        .withDeadline(Date.now() + PROGRESS_QUERY_MS, () => handle.query<BackfillProgress>(BACKFILL_PROGRESS_QUERY))
        .catch(() => zero);
      return { status: 'running', progress, ...base };
    }
    case 'COMPLETED': {
      const { progress }: BackfillResult = await handle.result();
      return { status: 'completed', progress, ...base, completed_at: ended!.toISOString() };
    }
    default: {
      const error = await handle.result().then(
        () => description.status.name.toLowerCase(),
        (err: Error) => (err.cause as Error | undefined)?.message ?? err.message,
      );
      return { status: 'failed', progress: zero, ...base, error };
    }
  }
}
