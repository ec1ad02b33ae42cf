import type { Knex } from 'knex';

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

export async function searchAnalytics(db: Knex, period: AnalyticsPeriod): Promise<SearchAnalytics> {
  const days = ANALYTICS_PERIODS[period];
  // The period: today (UTC) and the days - 1 before it.
  const since = db.raw("((now() at time zone 'UTC')::date - (?::int - 1))", [days]);
  const inPeriod = () => db('search_queries').whereRaw("created_at >= ?::date at time zone 'UTC'", [since]);
  const [perDay, top, zero, summary] = await Promise.all([
    db
      .select(db.raw("to_char(d, 'YYYY-MM-DD') as date"), db.raw('count(q.id)::int as count'))
      .from(
        db.raw(
          "generate_series(?::date::timestamp, (now() at time zone 'UTC')::date::timestamp, interval '1 day') as d",
          [since],
        ),
      )
      .leftJoin(
        db.raw(
          `search_queries q on q.created_at >= d at time zone 'UTC' and q.created_at < (d + interval '1 day') at time zone 'UTC'`,
        ),
      )
      .groupBy('d')
      .orderBy('d'),
    inPeriod()
      .select('query', db.raw('count(*)::int as count'))
      .groupBy('query')
      .orderBy([{ column: 'count', order: 'desc' }, 'query'])
      .limit(TOP_QUERIES),
    inPeriod()
      .where('result_count', 0)
      .select('query', db.raw('count(*)::int as count'))
      .groupBy('query')
      .orderBy([{ column: 'count', order: 'desc' }, 'query'])
      .limit(TOP_QUERIES),
    inPeriod().first(
      db.raw('count(*)::int as total'),
      db.raw('percentile_cont(0.5) within group (order by took_ms)::float8 as median'),
    ),
  ]);
  return {
    period,
    total_searches: summary?.total ?? 0,
    searches_per_day: perDay as { date: string; count: number }[],
    top_queries: top as { query: string; count: number }[],
    zero_result_queries: zero as { query: string; count: number }[],
    median_latency_ms: summary?.median ?? null,
  };
}
