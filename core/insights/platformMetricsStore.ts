import type { Knex } from 'knex';
import {
  addDays,
  CALLER_KINDS,
  type ActorKind,
  type CallerKind,
  type CatalogCounts,
  type DayFigures,
  type ForgeRunFigures,
} from './platformMetricsRules';

// The SQL of platform metrics (the reads' statements are exported: the benchmark's floor runs
// them). Every function but `tenantsToRollUp` runs in a tenant transaction (row-level security
// scopes it). A day's raw figures read one UTC day of each source through its (tenant_id, time)
// index; the catalog is a count over the tenant's entities as they are now.

interface RawDayRow {
  active_users: number;
  agents_connected: number;
  api_calls: Partial<Record<CallerKind, number>> | null;
  forge_runs: ForgeRunFigures[] | null;
  searches: number;
  zero_result_searches: number;
}

export const RAW_DAY_SQL = `
  select
    (select count(*)::int from platform_daily_actors where day = :day::date and actor_kind = 'user') as active_users,
    (select count(*)::int from platform_daily_actors where day = :day::date and actor_kind = 'agent') as agents_connected,
    (select jsonb_object_agg(caller_kind, calls) from platform_api_calls where day = :day::date) as api_calls,
    (select jsonb_agg(r order by r.mold, r.outcome) from (
      select mold_slug as mold, status as outcome, count(*)::int as count,
        round(percentile_cont(0.5) within group (order by duration_ms))::int as duration_p50_ms,
        round(percentile_cont(0.95) within group (order by duration_ms))::int as duration_p95_ms
      from (
        select mold_slug, status, extract(epoch from finished_at - started_at) * 1000 as duration_ms
        from runs where created_at >= :start::timestamptz and created_at < :end::timestamptz
      ) as timed
      group by mold_slug, status
    ) as r) as forge_runs,
    s.searches, s.zero_result_searches
  from (
    select count(*)::int as searches, (count(*) filter (where result_count = 0))::int as zero_result_searches
    from search_queries
    where created_at >= :start::timestamptz and created_at < :end::timestamptz
  ) as s`;

/** One day's figures from the raw rows (the recorded calls and actors, runs, searches), without the catalog. */
export async function rawDayFigures(trx: Knex, day: string): Promise<Omit<DayFigures, 'catalog'>> {
  // The bounds as instants: a day's length in the session's time zone is not always 24 hours.
  const [start, end] = [`${day}T00:00:00Z`, `${addDays(day, 1)}T00:00:00Z`];
  const { rows } = await trx.raw<{ rows: RawDayRow[] }>(RAW_DAY_SQL, { day, start, end });
  const row = rows[0];
  const calls = row.api_calls ?? {};
  return {
    day,
    active_users: row.active_users,
    agents_connected: row.agents_connected,
    api_calls: Object.fromEntries(CALLER_KINDS.map((kind) => [kind, Number(calls[kind] ?? 0)])) as Record<
      CallerKind,
      number
    >,
    forge_runs: row.forge_runs ?? [],
    searches: row.searches,
    zero_result_searches: row.zero_result_searches,
  };
}

export const CATALOG_COUNTS_SQL = `
  select count(*)::int as entities, count(owner)::int as with_owner,
    (count(*) filter (where coalesce(readme, '') <> ''))::int as with_docs, count(tier)::int as with_tier
  from entities`;

/** The tenant's catalog completeness now: a docs entity has a non-empty README. */
export async function catalogCounts(trx: Knex): Promise<CatalogCounts> {
  const { rows } = await trx.raw<{ rows: CatalogCounts[] }>(CATALOG_COUNTS_SQL);
  return rows[0];
}

/**
 * Writes the tenant's figures of one day, replacing any earlier rollup of it; a catalog snapshot
 * taken earlier is kept when this rollup took none.
 */
export async function saveRollup(trx: Knex, tenantId: string, figures: DayFigures): Promise<void> {
  await trx('platform_metrics_daily')
    .insert({
      tenant_id: tenantId,
      day: figures.day,
      active_users: figures.active_users,
      agents_connected: figures.agents_connected,
      api_calls: JSON.stringify(figures.api_calls),
      forge_runs: JSON.stringify(figures.forge_runs),
      searches: figures.searches,
      zero_result_searches: figures.zero_result_searches,
      catalog: figures.catalog && JSON.stringify(figures.catalog),
      computed_at: trx.fn.now(),
    })
    .onConflict(['tenant_id', 'day'])
    .merge({
      active_users: trx.raw('excluded.active_users'),
      agents_connected: trx.raw('excluded.agents_connected'),
      api_calls: trx.raw('excluded.api_calls'),
      forge_runs: trx.raw('excluded.forge_runs'),
      searches: trx.raw('excluded.searches'),
      zero_result_searches: trx.raw('excluded.zero_result_searches'),
      catalog: trx.raw('coalesce(excluded.catalog, platform_metrics_daily.catalog)'),
      computed_at: trx.raw('excluded.computed_at'),
    });
}

/** The tenant's last rolled-up day, null before its first rollup. */
export async function lastRolledDay(trx: Knex): Promise<string | null> {
  const row = await trx('platform_metrics_daily').first(trx.raw("to_char(max(day), 'YYYY-MM-DD') as day"));
  return (row as { day: string | null } | undefined)?.day ?? null;
}

export const ROLLED_UP_DAYS_SQL = `
  select to_char(day, 'YYYY-MM-DD') as day, active_users, agents_connected, api_calls, forge_runs, searches,
    zero_result_searches, catalog
  from platform_metrics_daily where day between :from::date and :to::date order by platform_metrics_daily.day`;

/** The rolled-up days between `from` and `to` (inclusive), oldest first: one primary-key range. */
export async function rolledUpDays(trx: Knex, from: string, to: string): Promise<DayFigures[]> {
  const { rows } = await trx.raw<{ rows: DayFigures[] }>(ROLLED_UP_DAYS_SQL, { from, to });
  return rows;
}

/** Every tenant with the day it was created (the system role): the rollup's work list. */
export async function tenantsToRollUp(system: Knex): Promise<{ id: string; created: string }[]> {
  return system('tenants').select('id', system.raw("to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as created"));
}

// What the API's recorder flushes (core/insights/platformMetricsRecorder.ts).

/** Adds calls to the tenant's per-day counters. */
export async function addApiCalls(
  trx: Knex,
  tenantId: string,
  counts: { day: string; caller_kind: CallerKind; calls: number }[],
): Promise<void> {
  if (!counts.length) return;
  await trx('platform_api_calls')
    .insert(counts.map((count) => ({ tenant_id: tenantId, ...count })))
    .onConflict(['tenant_id', 'day', 'caller_kind'])
    .merge({ calls: trx.raw('platform_api_calls.calls + excluded.calls') });
}

/** Records who called on which day; one who already did that day is left as is. */
export async function addActors(
  trx: Knex,
  tenantId: string,
  actors: { day: string; actor_kind: ActorKind; actor_id: string }[],
): Promise<void> {
  if (!actors.length) return;
  await trx('platform_daily_actors')
    .insert(actors.map((actor) => ({ tenant_id: tenantId, ...actor })))
    .onConflict(['tenant_id', 'day', 'actor_kind', 'actor_id'])
    .ignore();
}
