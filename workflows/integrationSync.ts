import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ActivityFailure, continueAsNew, executeChild, proxyActivities } from '@temporalio/workflow';
import type { IntegrationSyncActivities } from '../activities/integrationSync';
import type {
  IntegrationSyncResult,
  IntegrationSyncTickWorkflow,
  IntegrationSyncWorkflow,
  SyncTickInput,
  SyncTickResult,
} from '../core/integrations/syncControl';
import type { SyncTarget } from '../core/integrations/syncRules';
import { shipyardSearchAttributes } from '../core/searchAttributes';

// Integration sync (docs/integrations.md): one workflow per integration at a time (its id), and
// the schedule's tick that starts one for every integration in use.

const { syncIntegration } = proxyActivities<IntegrationSyncActivities>({
  startToCloseTimeout: '10 minutes',
  // Also how long a sync waits for one of its tenant's slots (SyncSlotsTaken): about 10 minutes in all.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 8 },
});
const { recordSyncGaveUp, integrationsToSync } = proxyActivities<IntegrationSyncActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/** Syncs the tick runs side by side. */
const PARALLEL_SYNCS = 4;

/**
 * Pulls from the integration's system and records the outcome on the integration. A sync that
 * fails inside Shipyard past its retries is recorded too, so the status never claims a success.
 */
export async function integrationSync(target: SyncTarget): Promise<IntegrationSyncResult> {
  try {
    return await syncIntegration(target);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await recordSyncGaveUp(target);
    return { status: 'error', counts: {} };
  }
}

/**
 * The schedule's tick (`shipyard-integration-sync-tick`): a sync of every integration in use,
 * round-robin by tenant, a few at a time, each a child workflow with the integration's own id.
 * One already syncing (a POST's) is left to finish. Continues as new after each full page.
 */
export async function integrationSyncTick(input: SyncTickInput = { offset: 0 }): Promise<SyncTickResult> {
  const { syncs, nextOffset } = await integrationsToSync({ offset: input.offset });
  const result: SyncTickResult = { integrations: syncs.length, synced: 0, already_running: 0, failed: 0 };
  for (let i = 0; i < syncs.length; i += PARALLEL_SYNCS) {
    const outcomes = await Promise.all(
      syncs.slice(i, i + PARALLEL_SYNCS).map(({ target, workflowId }) =>
        executeChild(integrationSync, {
          workflowId,
          args: [target],
          typedSearchAttributes: shipyardSearchAttributes({ kind: 'integration-sync', tenantId: target.tenantId }),
        }).then(
          () => 'synced' as const,
          (err) =>
            err instanceof WorkflowExecutionAlreadyStartedError ? ('already_running' as const) : ('failed' as const),
        ),
      ),
    );
    for (const outcome of outcomes) result[outcome] += 1;
  }
  if (nextOffset !== null) await continueAsNew<typeof integrationSyncTick>({ offset: nextOffset });
  return result;
}

integrationSync satisfies IntegrationSyncWorkflow;
integrationSyncTick satisfies IntegrationSyncTickWorkflow;
