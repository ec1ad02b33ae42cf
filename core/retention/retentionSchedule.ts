import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import { RETENTION_SCHEDULE_ID, retentionPolicyOf, type PruneRetentionWorkflow } from './retentionRules';

/** The platform pool's prune of expired rows, every `retention.intervalMs`. */
export function retentionSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: RETENTION_SCHEDULE_ID,
    workflowType: 'pruneRetention',
    pool: 'platform',
    everyMs: config.retention.intervalMs,
    args: [retentionPolicyOf(config)] satisfies Parameters<PruneRetentionWorkflow>,
    kind: 'retention',
  };
}
