import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import {
  PLATFORM_METRICS_SCHEDULE_ID,
  type PlatformMetricsRollupInput,
  type PlatformMetricsRollupWorkflow,
} from './platformMetricsRules';

export const platformMetricsRollupInput = (config: Config): PlatformMetricsRollupInput => ({
  backfill_days: config.platformMetrics.backfillDays,
});

/** The platform pool's nightly rollup of every tenant's closed days (interval-aligned: 00:00 UTC daily). */
export function platformMetricsSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: PLATFORM_METRICS_SCHEDULE_ID,
    workflowType: 'rollupPlatformMetrics',
    pool: 'platform',
    everyMs: config.platformMetrics.rollupIntervalMs,
    args: [platformMetricsRollupInput(config)] satisfies Parameters<PlatformMetricsRollupWorkflow>,
    kind: 'platform-metrics',
  };
}
