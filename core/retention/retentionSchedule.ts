import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { RETENTION_SCHEDULE_ID, retentionPolicyOf, type PruneRetentionWorkflow } from './retentionRules';

/**
 * Creates the retention schedule, or brings an existing one in line with `config` (interval and
 * retention), so every start of the platform pool may call it: the fixed id means there is never
 * a second schedule. An operator's pause survives a restart. A prune still running when the next
 * one is due makes that one skip, never run beside it.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<void> {
  const spec = { intervals: [{ every: config.retention.intervalMs }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'pruneRetention',
    workflowId: RETENTION_SCHEDULE_ID,
    taskQueue: TASK_QUEUES.platform,
    args: [retentionPolicyOf(config)] as Parameters<PruneRetentionWorkflow>,
    // Each prune it starts carries them: ShipyardKind = 'retention' in the Web UI's filter.
    typedSearchAttributes: shipyardSearchAttributes({ kind: 'retention' }),
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP };
  try {
    await client.schedule.create({ scheduleId: RETENTION_SCHEDULE_ID, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule
      .getHandle(RETENTION_SCHEDULE_ID)
      .update((previous) => ({ ...previous, spec, action, policies, state: previous.state }));
  }
}
