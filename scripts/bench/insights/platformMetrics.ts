import { escapeLiteral, Pool } from 'pg';
import { loadConfig } from '../../../core/config';
import { addDays, utcDay } from '../../../core/insights/platformMetricsRules';
import { CATALOG_COUNTS_SQL, RAW_DAY_SQL, ROLLED_UP_DAYS_SQL } from '../../../core/insights/platformMetricsStore';
import { withTenant } from '../../../db/tenancy';
import { createWorkerClients } from '../../../workers/clients';
import { catalogAdmin, ENTITIES, TENANT } from '../catalogTenant';
import { get, measureSideBySide, ONE_TENANT_LOAD, startApiProcess, type Figures } from '../load';

// GET /insights/platform-metrics for 30 and 365 days on the catalog tenant (ENTITIES entities, as
// bench:catalog seeds them), with a year of daily rollups and a busy today (USERS users and
// AGENTS agents calling, RUNS forge runs of 10 molds, SEARCHES searches). Its floor: the same
// statements (the rollup's range, today's raw figures, the catalog count) through raw pg in one
// tenant transaction. One client, REQUESTS requests per case in rounds that take turns; the floor
// runs twice (the second is the noise). Goals: ≤ 1.5× the floor, and p95 < 300 ms.
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const USERS = 200;
const AGENTS = 10;
const RUNS = 200;
const SEARCHES = 2_000;
const RATIO_GOAL = 1.5;
const P95_GOAL_MS = 300;
const BENCH_RUN = 'bench-platform-metrics';

/** knex's named bindings (`:day`) as pg's positional ones, in the order `names` gives. */
const positional = (sql: string, names: string[]) =>
  names.reduce((text, name, i) => text.replace(new RegExp(`:${name}\\b`, 'g'), `$${i + 1}`), sql);

/** A year of the tenant's rollups (replacing any), and today's raw rows (the bench's own, renewed). */
async function seed(tenantId: string): Promise<void> {
  const clients = createWorkerClients(loadConfig(), { poolMax: 1 });
  try {
    await withTenant(clients.db, tenantId, async (trx) => {
      await trx.raw(`
        insert into platform_metrics_daily (tenant_id, day, active_users, agents_connected, api_calls, forge_runs,
          searches, zero_result_searches, catalog)
        select app_current_tenant(), d::date, 150 + (random() * 50)::int, ${AGENTS},
          jsonb_build_object('session', 20000, 'api_key', 5000, 'agent', 30000),
          (select jsonb_agg(jsonb_build_object('mold', 'mold-' || m, 'outcome', o, 'count', 10,
              'duration_p50_ms', 30000, 'duration_p95_ms', 90000))
            from generate_series(0, 9) m, unnest(array['completed', 'failed', 'cancelled']) o),
          1000, 80,
          jsonb_build_object('entities', ${ENTITIES}, 'with_owner', ${ENTITIES} * 0.8, 'with_docs', ${ENTITIES} * 0.5,
            'with_tier', ${ENTITIES} * 0.6)
        from generate_series((now() at time zone 'UTC')::date - 365, (now() at time zone 'UTC')::date - 1,
          interval '1 day') as d
        on conflict (tenant_id, day) do update set active_users = excluded.active_users,
          api_calls = excluded.api_calls, forge_runs = excluded.forge_runs, catalog = excluded.catalog`);
      const today = utcDay(new Date());
      await trx('runs').where({ started_by: BENCH_RUN }).delete();
      await trx('search_queries').where('query', 'like', `${BENCH_RUN}%`).delete();
      await trx('platform_daily_actors')
        .insert(
          [
            ...Array.from({ length: USERS }, (_, i) => ({ actor_kind: 'user', actor_id: `bench-user-${i}` })),
            ...Array.from({ length: AGENTS }, (_, i) => ({ actor_kind: 'agent', actor_id: `bench-cluster-${i}` })),
          ].map((actor) => ({ tenant_id: tenantId, day: today, ...actor })),
        )
        .onConflict()
        .ignore();
      await trx.raw(`
        insert into runs (tenant_id, mold_slug, mold_version, mold_snapshot, parameters, status, started_by,
          workflow_id, started_at, finished_at)
        select app_current_tenant(), 'mold-' || (i % 10), 1, '{}', '{}',
          case when i % 7 = 0 then 'failed' else 'completed' end, '${BENCH_RUN}', '${BENCH_RUN}-' || i,
          now(), now() + make_interval(secs => 10 + i % 60)
        from generate_series(1, ${RUNS}) i`);
      await trx.raw(`
        insert into search_queries (tenant_id, query, result_count, took_ms)
        select app_current_tenant(), '${BENCH_RUN} ' || (i % 50), i % 9, 5 from generate_series(1, ${SEARCHES}) i`);
    });
  } finally {
    await clients.close();
  }
}

export async function bench(): Promise<void> {
  const config = loadConfig();
  const { token, tenantId } = await catalogAdmin(config);
  await seed(tenantId);
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: 1 });
  const rolledUp = positional(ROLLED_UP_DAYS_SQL, ['from', 'to']);
  const rawDay = positional(RAW_DAY_SQL, ['day', 'start', 'end']);
  try {
    const today = utcDay(new Date());
    const caseOf = (days: number) => {
      const from = addDays(today, -(days - 1));
      const ours = () =>
        get(`${api.base}/api/v1/insights/platform-metrics?from=${from}`, { authorization: `Bearer ${token}` });
      const floor = async () => {
        const client = await pg.connect();
        try {
          await client.query(`begin; set local app.tenant_id = ${escapeLiteral(tenantId)}`);
          await client.query(rolledUp, [from, addDays(today, -1)]);
          await client.query(rawDay, [today, `${today}T00:00:00Z`, `${addDays(today, 1)}T00:00:00Z`]);
          await client.query(CATALOG_COUNTS_SQL);
          await client.query('commit');
        } finally {
          client.release();
        }
      };
      return { ours, floor };
    };
    console.log(
      `bench:insights platform metrics — GET /insights/platform-metrics on ${ENTITIES} entities (tenant ${TENANT}) ` +
        `with a year of daily rollups and today live (${USERS} users, ${RUNS} runs, ${SEARCHES} searches), one client, ` +
        `${REQUESTS} requests a case, the API in its own process; floor: the same statements through raw pg in one ` +
        `tenant transaction.`,
    );
    const ms = (f: Figures) => `p50 ${f.p50.toFixed(2).padStart(7)} ms  p95 ${f.p95.toFixed(2).padStart(7)} ms`;
    for (const days of [30, 365]) {
      const { ours, floor } = caseOf(days);
      const [o, f, again] = await measureSideBySide([ours, floor, floor], { requests: REQUESTS, concurrency: 1 });
      const row = (name: string, figures: Figures) =>
        `${name.padEnd(40)} ${ms(figures)}  ${(figures.p50 / f.p50).toFixed(2)}× floor`;
      console.log(row(`${days} days through the API`, o));
      console.log(row(`${days} days floor: raw pg`, f));
      console.log(row(`${days} days floor measured again (noise)`, again));
      const ratio = o.p50 / f.p50;
      const noise = Math.abs(1 - again.p50 / f.p50);
      console.log(
        `goal (${days} days): ≤ ${RATIO_GOAL}× floor: ${ratio.toFixed(2)}× ${ratio <= RATIO_GOAL + noise ? 'met' : 'NOT MET'}; ` +
          `p95 < ${P95_GOAL_MS} ms: ${o.p95.toFixed(1)} ms ${o.p95 < P95_GOAL_MS ? 'met' : 'NOT MET'}`,
      );
    }
  } finally {
    await pg.end();
    api.proc.kill();
  }
}
