import type { Principal } from '../auth/principal';
import { invalid } from '../errors';

// Platform metrics: the vocabulary, the days a read covers and the days a rollup computes.
// Days are UTC calendar dates written `YYYY-MM-DD`.

/** Who made an API call: a signed-in user's session, an API key, or a cluster agent. */
export const CALLER_KINDS = ['session', 'api_key', 'agent'] as const;
export type CallerKind = (typeof CALLER_KINDS)[number];

/** Who is counted once a day: session users (active users) and agents' clusters (agents connected). */
export const ACTOR_KINDS = ['user', 'agent'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const callerKindOf = (principal: Principal): CallerKind =>
  principal.kind === 'user' ? 'session' : principal.kind;

/** The one actor a call counts, if any: API keys are not users at work, so they count no one. */
export function actorOf(principal: Principal): { kind: ActorKind; id: string } | undefined {
  if (principal.kind === 'user') return { kind: 'user', id: principal.userId };
  if (principal.kind === 'agent') return { kind: 'agent', id: principal.clusterId };
  return undefined;
}

export interface ForgeRunFigures {
  mold: string;
  outcome: string;
  count: number;
  /** Over the runs that finished; null when none did. */
  duration_p50_ms: number | null;
  duration_p95_ms: number | null;
}

export interface CatalogCounts {
  entities: number;
  with_owner: number;
  with_docs: number;
  with_tier: number;
}

/** One tenant's figures for one day, as rolled up (or computed live for today). */
export interface DayFigures {
  day: string;
  active_users: number;
  agents_connected: number;
  api_calls: Record<CallerKind, number>;
  forge_runs: ForgeRunFigures[];
  searches: number;
  zero_result_searches: number;
  /** null when the day was rolled up after it had passed (the catalog as it was is gone). */
  catalog: CatalogCounts | null;
}

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);
export const addDays = (day: string, days: number): string =>
  utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS));
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
const rangeError = (field: 'from' | 'to', message: string) => invalid(`${field} ${message}`, [{ field, message }]);

/** The default window of a read: the last 30 days, today included. */
export const DEFAULT_RANGE_DAYS = 30;

/**
 * The days a read covers, from its `from` and `to` (both optional, inclusive): `to` defaults to
 * today, `from` to 29 days before `to`. A range that is reversed, longer than `maxDays`, or ends
 * after today is a 400 naming the limit.
 */
export function readRange(
  query: { from?: string; to?: string },
  today: string,
  maxDays: number,
): { from: string; to: string } {
  for (const field of ['from', 'to'] as const) {
    const value = query[field];
    if (value === undefined) continue;
    // Not a day of the calendar (2026-02-30, 0000-00-00): Date parses it to NaN or another day.
    const parsed = Date.parse(`${value}T00:00:00Z`);
    if (!DAY.test(value) || Number.isNaN(parsed) || utcDay(new Date(parsed)) !== value)
      throw rangeError(field, 'must be a date (YYYY-MM-DD)');
  }
  const to = query.to ?? today;
  const from = query.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
  if (to > today) throw rangeError('to', 'must not be after today (UTC)');
  if (from > to) throw rangeError('from', 'must not be after to');
  if (daysBetween(from, to) + 1 > maxDays)
    throw rangeError('from', `is too early: a range covers at most ${maxDays} days`);
  return { from, to };
}

/**
 * How many of the latest closed days every rollup computes again (re-running a day replaces it):
 * the day before yesterday too, since calls counted before midnight and flushed after it, and runs
 * that finished after it, land in it after its first rollup.
 */
export const SETTLING_DAYS = 2;

/**
 * The closed days a tenant's rollup computes: the SETTLING_DAYS latest, and every day after the
 * last one rolled up that the schedule missed; at most `backfillDays` back and never before the
 * tenant existed (none for a tenant created today). Oldest first.
 */
export function daysToRollUp(
  today: string,
  lastRolled: string | null,
  tenantCreated: string,
  backfillDays: number,
): string[] {
  const yesterday = addDays(today, -1);
  let first = addDays(today, -backfillDays);
  if (tenantCreated > first) first = tenantCreated;
  if (lastRolled) {
    const [next, settling] = [addDays(lastRolled, 1), addDays(today, -SETTLING_DAYS)];
    const resume = next < settling ? next : settling;
    if (resume > first) first = resume;
  }
  const days: string[] = [];
  for (let day = first; day <= yesterday; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The shares of the catalog's completeness (0..1, three decimals); null for an empty catalog. */
export function completeness(counts: CatalogCounts | null) {
  if (!counts) return null;
  const share = (part: number) => (counts.entities ? Math.round((part / counts.entities) * 1000) / 1000 : null);
  return {
    ...counts,
    owner_share: share(counts.with_owner),
    docs_share: share(counts.with_docs),
    tier_share: share(counts.with_tier),
  };
}

// The nightly rollup's contract (workflows/platformMetrics.ts implements it; core names it).

export const PLATFORM_METRICS_SCHEDULE_ID = 'shipyard-platform-metrics';

export interface PlatformMetricsRollupInput {
  /** How far back a tenant's missed days are computed. */
  backfill_days: number;
}

export type PlatformMetricsRollupWorkflow = (
  input: PlatformMetricsRollupInput,
) => Promise<{ tenants: number; days: number }>;
