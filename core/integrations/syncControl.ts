import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { syncWorkflowId, type SyncTarget } from './syncRules';

// Starting integration syncs: the contracts the API and the schedule start the workflows by
// (they never import workflows/), POST /integrations/{id}/sync's start, and the schedule.

/** Counts only: they enter workflow history. */
export interface IntegrationSyncResult {
  /** `skipped`: the integration was gone, inactive or of a type without a sync when the sync ran. */
  status: 'active' | 'error' | 'skipped';
  /** What the sync brought in: repositories listed, incidents and on-call entries written. */
  counts: Record<string, number>;
}

export type IntegrationSyncWorkflow = (target: SyncTarget) => Promise<IntegrationSyncResult>;
/** Where a tick is in the list of integrations to sync (it continues as new every so many). */
export interface SyncTickInput {
  offset: number;
}
/** What one run of the tick goes through: each sync with its workflow id, and where the next run starts. */
export interface SyncTickPage {
  syncs: { target: SyncTarget; workflowId: string }[];
  nextOffset: number | null;
}
export interface SyncTickResult {
  /** Integrations this run of the tick went through. */
  integrations: number;
  synced: number;
  /** Already syncing (a POST's sync): left to that one. */
  already_running: number;
  failed: number;
}
export type IntegrationSyncTickWorkflow = (input?: SyncTickInput) => Promise<SyncTickResult>;
export const SYNC_TICK_SCHEDULE_ID = 'shipyard-integration-sync-tick';

export interface SyncStarted {
  integration_id: string;
  workflow_id: string;
  started_at: string;
  /** A sync of the integration was already running: the answer is that one. */
  already_running: boolean;
}

/**
 * Starts a sync of the integration on the platform pool, or answers with the one already
 * running (its fixed workflow id lets Temporal refuse a second).
 */
export async function startSync(temporal: TemporalClient, target: SyncTarget): Promise<SyncStarted> {
  const workflowId = syncWorkflowId(target.integrationId);
  let alreadyRunning = false;
  try {
    await temporal.workflow.start<IntegrationSyncWorkflow>('integrationSync', {
      taskQueue: TASK_QUEUES.platform,
      workflowId,
      args: [target],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'integration-sync', tenantId: target.tenantId }),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    alreadyRunning = true;
  }
  // The server's start time, so both answers about one sync say the same.
  const { startTime } = await temporal.workflow.getHandle(workflowId).describe();
  return {
    integration_id: target.integrationId,
    workflow_id: workflowId,
    started_at: startTime.toISOString(),
    already_running: alreadyRunning,
  };
}

/** The platform pool's sync of every integration in use, every `integrations.syncIntervalMs`. */
export function syncTickSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: SYNC_TICK_SCHEDULE_ID,
    workflowType: 'integrationSyncTick',
    pool: 'platform',
    everyMs: config.integrations.syncIntervalMs,
    args: [] satisfies Parameters<IntegrationSyncTickWorkflow>,
    kind: 'integration-sync-tick',
  };
}
