import { proxyActivities } from '@temporalio/workflow';
import type { ForgeActivities } from '../activities/forge';
import type { ReconcileForgeRunsWorkflow } from '../core/forge/types';

const { reconcileRuns } = proxyActivities<ForgeActivities>({
  // Many unfinished runs take many pages; the heartbeat, not this bound, detects a lost worker.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

/**
 * Ends, `failed` with Temporal's reason, every run whose workflow Temporal closed on its own
 * (core/forge/runReconciliation.ts). Started by the `shipyard-forge-reconcile` schedule on the
 * forge pool; only the count enters its history.
 */
export async function reconcileForgeRuns(): Promise<number> {
  return reconcileRuns();
}

// The contract the schedule starts this workflow by (core/ names it, never imports it).
reconcileForgeRuns satisfies ReconcileForgeRunsWorkflow;
