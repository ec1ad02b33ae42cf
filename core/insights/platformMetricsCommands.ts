import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { addDays, completeness, daysToRollUp, type DayFigures } from './platformMetricsRules';
import { catalogCounts, lastRolledDay, rawDayFigures, rolledUpDays, saveRollup } from './platformMetricsStore';

/**
 * Rolls up the tenant's closed days that are due (the latest two, and any the schedule missed up
 * to `backfillDays` back), one short tenant transaction per day; returns how many. The catalog is
 * a snapshot, so only yesterday's rollup takes it: an older day's catalog is gone (a day rolled
 * up again keeps the one it has).
 */
export async function rollUpTenant(
  db: Knex,
  tenant: { id: string; created: string },
  today: string,
  backfillDays: number,
): Promise<number> {
  const last = await withTenant(db, tenant.id, lastRolledDay);
  const days = daysToRollUp(today, last, tenant.created, backfillDays);
  const yesterday = addDays(today, -1);
  for (const day of days) {
    await withTenant(db, tenant.id, async (trx) => {
      const figures = await rawDayFigures(trx, day);
      const catalog = day === yesterday ? await catalogCounts(trx) : null;
      await saveRollup(trx, tenant.id, { ...figures, catalog });
    });
  }
  return days.length;
}

/** A day as the API answers it: the catalog with its shares, and whether the day is still going. */
export type DaySeriesEntry = Omit<DayFigures, 'catalog'> & {
  partial: boolean;
  catalog: ReturnType<typeof completeness>;
};

/**
 * The tenant's days from `from` to `to` (inclusive): closed days from the rollup only, today
 * (when in range) computed live from its own raw rows. A closed day not rolled up yet is absent.
 */
export async function platformMetricsSeries(
  trx: Knex,
  range: { from: string; to: string },
  today: string,
): Promise<DaySeriesEntry[]> {
  const closedTo = range.to < today ? range.to : addDays(today, -1);
  const closed = range.from <= closedTo ? await rolledUpDays(trx, range.from, closedTo) : [];
  const series = closed.map((day) => ({ ...day, partial: false, catalog: completeness(day.catalog) }));
  if (range.to === today) {
    const [live, catalog] = [await rawDayFigures(trx, today), await catalogCounts(trx)];
    series.push({ ...live, partial: true, catalog: completeness(catalog) });
  }
  return series;
}
