import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import { RECONCILE_SCHEDULE_ID, type ReconcileForgeRunsWorkflow } from './types';

/** The forge pool's reconciliation of runs whose workflow Temporal closed, every `forge.reconcileIntervalMs`. */
export function reconcileSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: RECONCILE_SCHEDULE_ID,
    workflowType: 'reconcileForgeRuns',
    pool: 'forge',
    everyMs: config.forge.reconcileIntervalMs,
    args: [] satisfies Parameters<ReconcileForgeRunsWorkflow>,
    kind: 'forge-reconcile',
  };
}
