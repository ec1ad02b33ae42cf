import type { Knex } from 'knex';
import { rollUpTenant } from '../core/insights/platformMetricsCommands';
import { utcDay } from '../core/insights/platformMetricsRules';
import { tenantsToRollUp } from '../core/insights/platformMetricsStore';

export function createPlatformMetricsActivities(deps: { db: Knex; system: Knex }) {
  return {
    /** Every tenant with its creation day (the system role); the day the rollup runs for. */
    async listTenantsToRollUp(): Promise<{ today: string; tenants: { id: string; created: string }[] }> {
      return { today: utcDay(new Date()), tenants: await tenantsToRollUp(deps.system) };
    },
    /**
     * Rolls up one tenant's due days, as of `today` (fixed once per run, so a run that crosses
     * midnight does not roll up a day still going); returns how many days.
     */
    async rollUpTenantDays(input: {
      tenant_id: string;
      created: string;
      today: string;
      backfill_days: number;
    }): Promise<number> {
      return rollUpTenant(deps.db, { id: input.tenant_id, created: input.created }, input.today, input.backfill_days);
    },
  };
}

export type PlatformMetricsActivities = ReturnType<typeof createPlatformMetricsActivities>;
