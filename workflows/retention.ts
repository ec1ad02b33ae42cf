import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';
import type { PruneCounts, PruneRetentionWorkflow, RetentionPolicy } from '../core/retention/retentionRules';

const { pruneExpiredRows } = proxyActivities<RetentionActivities>({
  // A large backlog takes many batches; the heartbeat, not this bound, detects a lost worker.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/**
 * Deletes run logs, audit entries and dispatched webhook events older than their retention, in
 * every tenant. Started by the `shipyard-retention` schedule on the platform pool; only the
 * counts enter its history.
 */
export async function pruneRetention(policy: RetentionPolicy): Promise<PruneCounts> {
  // One table after the other: the prune is background work and should not compete with itself.
  const run_logs = await pruneExpiredRows({
    table: 'run_logs',
    keep_days: policy.keep_days.run_logs,
    batch_size: policy.batch_size,
  });
  const audit_log = await pruneExpiredRows({
    table: 'audit_log',
    keep_days: policy.keep_days.audit_log,
    batch_size: policy.batch_size,
  });
  const webhook_events = await pruneExpiredRows({
    table: 'webhook_events',
    keep_days: policy.keep_days.webhook_events,
    batch_size: policy.batch_size,
  });
  return { run_logs, audit_log, webhook_events };
}

// The contract the schedule starts this workflow by (core/ names it, never imports it).
pruneRetention satisfies PruneRetentionWorkflow;
