import type { Knex } from 'knex';
import { statement } from '../db/statements';

// What GET /search records and GET /analytics/search/{period} reads back (per tenant; row-level
// security scopes both).

export const ANALYTICS_PERIODS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type AnalyticsPeriod = keyof typeof ANALYTICS_PERIODS;

const TOP_QUERIES = 10;

// A pasted credential (an API key, a session token, a hash) must not sit in analytics: a run of
// 32 or more token characters with a digit, and an uppercase letter or no hyphen, is recorded as
// `[redacted]`. Long service ids (lowercase, hyphenated) and long words are kept.
const TOKEN_RUN = /[A-Za-z0-9_\-.+/=]{32,}/g;
const looksLikeCredential = (run: string) => /\d/.test(run) && (/[A-Z]/.test(run) || !run.includes('-'));

/** The query as recorded and grouped: trimmed, lowercase, spaces folded, credentials masked. */
export function recordedQuery(q: string): string {
  return q
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(TOKEN_RUN, (run) => (looksLikeCredential(run) ? '[redacted]' : run));
}

export async function recordSearch(
  db: Knex,
  tenantId: string,
  search: { q: string; resultCount: number; tookMs: number },
): Promise<void> {
  await db('search_queries').insert({
    tenant_id: tenantId,
    query: recordedQuery(search.q),
    result_count: search.resultCount,
    took_ms: Math.round(search.tookMs),
  });
}

export interface SearchAnalytics {
  period: AnalyticsPeriod;
  total_searches: number;
  /** Every day of the period, oldest first, days without searches as 0 (UTC dates). */
  searches_per_day: { date: string; count: number }[];
  top_queries: { query: string; count: number }[];
  zero_result_queries: { query: string; count: number }[];
  /** null when there were no searches. */
  median_latency_ms: number | null;
}

interface PeriodValues {
  /** The period's length in days. */
  days: number;
}

/** The period's first day: today (UTC) and the days - 1 before it. */
const since = (q: Knex, days: number) => q.raw("((now() at time zone 'UTC')::date - (?::int - 1))", [days]);

const inPeriod = (q: Knex, days: number) =>
  q('search_queries').whereRaw("created_at >= ?::date at time zone 'UTC'", [since(q, days)]);

const searchesPerDay = statement<{ date: string; count: number }, PeriodValues>((q, { days }) =>
  q
    .select(q.raw("to_char(d, 'YYYY-MM-DD') as date"), q.raw('count(q.id)::int as count'))
    .from(
      q.raw("generate_series(?::date::timestamp, (now() at time zone 'UTC')::date::timestamp, interval '1 day') as d", [
        since(q, days),
      ]),
    )
    .leftJoin(
      q.raw(
        `search_queries q on q.created_at >= d at time zone 'UTC' and q.created_at < (d + interval '1 day') at time zone 'UTC'`,
      ),
    )
    .groupBy('d')
    .orderBy('d'),
);

/** The most frequent queries: of all searches, or of those that found nothing. */
const topQueries = statement<{ query: string; count: number }, PeriodValues, 'all' | 'zero-result'>((q, { days }, of) =>
  inPeriod(q, days)
    .modify((query) => {
      if (of === 'zero-result') query.where('result_count', 0);
    })
    .select('query', q.raw('count(*)::int as count'))
    .groupBy('query')
    .orderBy([{ column: 'count', order: 'desc' }, 'query'])
    .limit(TOP_QUERIES),
);

const periodSummary = statement<{ total: number; median: number | null }, PeriodValues>((q, { days }) =>
  inPeriod(q, days).first(
    q.raw('count(*)::int as total'),
    q.raw('percentile_cont(0.5) within group (order by took_ms)::float8 as median'),
  ),
);

export async function searchAnalytics(db: Knex, period: AnalyticsPeriod): Promise<SearchAnalytics> {
  const values = { days: ANALYTICS_PERIODS[period] };
  const [perDay, top, zero, [summary]] = await Promise.all([
    searchesPerDay.rows(db, values),
    topQueries.rows(db, values, 'all'),
    topQueries.rows(db, values, 'zero-result'),
    periodSummary.rows(db, values),
  ]);
  return {
    period,
    total_searches: summary?.total ?? 0,
    searches_per_day: perDay,
    top_queries: top,
    zero_result_queries: zero,
    median_latency_ms: summary?.median ?? null,
  };
}
