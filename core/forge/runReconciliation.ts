import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { dropRunSlots } from './slotStore';
import { endAbandonedRun, unfinishedRuns, type UnfinishedRun } from './reconciliationStore';

// Runs whose workflow Temporal closed on its own (terminated, timed out, failed: e.g. a history
// over Temporal's limits) would stay `running` forever, since only the workflow writes a run's
// ending. Reconciliation ends them `failed` with the reason Temporal gives: the forge pool's
// recurring workflow goes over every unfinished run, and a cancel that finds the workflow gone
// reconciles that run at once (runCommands.ts).

/**
 * A run this young whose workflow does not exist may still be starting (the API commits a run
 * before it starts the workflow); older, its start was lost (the API stopped in between).
 */
const START_GRACE_MS = 60_000;

/** Runs read per page, and checked with Temporal at once. */
const PAGE = 200;
const CONCURRENT_CHECKS = 8;

const CLOSE_EVENT = proto.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;

/** Why Temporal closed the workflow, as its close event says (a termination's reason), if it says. */
async function closeReason(client: TemporalClient, workflowId: string, runId: string): Promise<string | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    historyEventFilterType: CLOSE_EVENT,
  });
  return history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason || undefined;
}

/**
 * Why the run cannot go on: its workflow is closed (or, past the start grace, was never there).
 * Undefined while the workflow is running, or may still be starting.
 */
async function abandonment(client: TemporalClient, run: Omit<UnfinishedRun, 'tenant_id'>): Promise<string | undefined> {
  try {
    const description = await client.workflow.getHandle(run.workflow_id).describe();
    const status = description.status.name;
    if (status === 'RUNNING') return undefined;
    const reason = status === 'TERMINATED' ? await closeReason(client, run.workflow_id, description.runId) : undefined;
    const ending = status.toLowerCase().replace(/_/g, ' ');
    return `its workflow ended in Temporal as ${ending}${reason ? ` (${reason})` : ''} before the run did`;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    if (Date.now() - run.created_at.getTime() < START_GRACE_MS) return undefined;
    return 'its workflow does not exist in Temporal (it was never started, or has been deleted)';
  }
}

export interface ReconcileDeps {
  /** The app role's pool: runs are ended in their tenant's transaction. */
  db: Knex;
  temporal: TemporalClient;
}

/**
 * Ends the run `failed` (or `cancelled`, should a cancel have been accepted) when its workflow
 * is closed; answers whether it did. Its slots go with it, so its tenant's queue moves on.
 */
export async function reconcileRun(
  deps: ReconcileDeps,
  tenantId: string,
  run: Omit<UnfinishedRun, 'tenant_id'>,
): Promise<boolean> {
  const reason = await abandonment(deps.temporal, run);
  if (!reason) return false;
  return withTenant(deps.db, tenantId, async (trx) => {
    const ended = await endAbandonedRun(trx, run.id, `the run was reconciled: ${reason}`);
    await dropRunSlots(trx, run.id);
    return ended;
  });
}

/**
 * Reconciles every tenant's unfinished runs, a page at a time (`progress` after each, for an
 * activity's heartbeat); answers how many were ended.
 */
export async function reconcileUnfinishedRuns(
  deps: ReconcileDeps & { system: Knex },
  progress: (reconciled: number) => void = () => {},
): Promise<number> {
  let reconciled = 0;
  let after: UnfinishedRun | undefined;
  for (;;) {
    const page = await unfinishedRuns(deps.system, after, PAGE);
    for (let i = 0; i < page.length; i += CONCURRENT_CHECKS) {
      const ended = await Promise.all(
        page.slice(i, i + CONCURRENT_CHECKS).map((run) => reconcileRun(deps, run.tenant_id, run)),
      );
      reconciled += ended.filter(Boolean).length;
    }
    progress(reconciled);
    if (page.length < PAGE) return reconciled;
    after = page[page.length - 1];
  }
}
