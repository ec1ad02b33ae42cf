import { proxyActivities } from '@temporalio/workflow';
import type { PlatformMetricsActivities } from '../activities/platformMetrics';
import type { PlatformMetricsRollupInput, PlatformMetricsRollupWorkflow } from '../core/insights/platformMetricsRules';

const { listTenantsToRollUp, rollUpTenantDays } = proxyActivities<PlatformMetricsActivities>({
  // A tenant's backfill is a few dozen short statements per missed day.
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 10 },
});

/**
 * The nightly rollup (the `shipyard-platform-metrics` schedule): each tenant's closed days that
 * are due, one tenant per activity, so a retry repeats one tenant's days (a rollup replaces the
 * day) and the history holds ids, dates and counts only.
 */
export async function rollupPlatformMetrics(
  input: PlatformMetricsRollupInput,
): Promise<{ tenants: number; days: number }> {
  const { today, tenants } = await listTenantsToRollUp();
  let days = 0;
  for (const tenant of tenants) {
    days += await rollUpTenantDays({
      tenant_id: tenant.id,
      created: tenant.created,
      today,
      backfill_days: input.backfill_days,
    });
  }
  return { tenants: tenants.length, days };
}

rollupPlatformMetrics satisfies PlatformMetricsRollupWorkflow;
