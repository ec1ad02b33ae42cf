import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../api/deps';
import { rollUpTenant } from '../../core/insights/platformMetricsCommands';
import { addDays, utcDay, type CallerKind } from '../../core/insights/platformMetricsRules';
import { withTenant } from '../../db/tenancy';
import { adminTenant, type AdminTenant } from '../support/adminSuite';
import { callApi, startApi, testConfig, testDeps, type Reply, type TestApi } from '../support/harness';

// GET /insights/platform-metrics against the real database: closed days from the rollup (run as
// the nightly workflow's activity runs it, with the day it runs as), today live from the raw rows
// that calls through the real routes leave behind. The recorder's timer is set far out, so only
// the test's own flush writes what the API counted.

let api: TestApi;
let deps: AppDeps;
let a: AdminTenant;
let b: AdminTenant;
const today = utcDay(new Date());
const daysAgo = (n: number) => addDays(today, -n);
const LONG_AGO = daysAgo(60);

const get = (token: string, query = ''): Promise<Reply> =>
  callApi(api, token, 'GET', `/insights/platform-metrics${query}`);

interface SeededDay {
  users: string[];
  agents: string[];
  calls: Record<CallerKind, number>;
  runs: { mold: string; status: string; durationMs: number | null }[];
  /** Each search's result count. */
  searches: number[];
}

/** The raw rows of one past day, at noon UTC, as the recorder, forge and search leave them. */
async function seedDay(tenantId: string, day: string, seed: SeededDay): Promise<void> {
  const noon = new Date(`${day}T12:00:00Z`);
  await withTenant(deps.db, tenantId, async (trx) => {
    const actors = [
      ...seed.users.map((id) => ({ actor_kind: 'user', actor_id: id })),
      ...seed.agents.map((id) => ({ actor_kind: 'agent', actor_id: id })),
    ];
    if (actors.length)
      await trx('platform_daily_actors').insert(actors.map((x) => ({ tenant_id: tenantId, day, ...x })));
    const calls = Object.entries(seed.calls).map(([caller_kind, n]) => ({
      tenant_id: tenantId,
      day,
      caller_kind,
      calls: n,
    }));
    if (calls.length) await trx('platform_api_calls').insert(calls);
    for (const run of seed.runs)
      await trx('runs').insert({
        tenant_id: tenantId,
        mold_slug: run.mold,
        mold_version: 1,
        mold_snapshot: {},
        parameters: {},
        started_by: 'platform-metrics-test',
        workflow_id: `platform-metrics-test-${randomUUID()}`,
        status: run.status,
        created_at: noon,
        started_at: noon,
        finished_at: run.durationMs === null ? null : new Date(noon.getTime() + run.durationMs),
      });
    for (const results of seed.searches)
      await trx('search_queries').insert({
        tenant_id: tenantId,
        query: 'q',
        result_count: results,
        took_ms: 1,
        created_at: noon,
      });
  });
}

const seeded: Record<number, SeededDay> = {
  3: {
    users: ['u1', 'u2'],
    agents: ['c1'],
    calls: { session: 40, api_key: 7, agent: 300 },
    runs: [
      { mold: 'deploy', status: 'completed', durationMs: 1_000 },
      { mold: 'deploy', status: 'completed', durationMs: 3_000 },
      { mold: 'deploy', status: 'failed', durationMs: 500 },
    ],
    searches: [3, 0, 0],
  },
  2: {
    users: ['u1'],
    agents: [],
    calls: { session: 5, api_key: 0, agent: 0 },
    runs: [{ mold: 'scaffold', status: 'running', durationMs: null }],
    searches: [1],
  },
  1: {
    users: ['u1', 'u2', 'u3'],
    agents: ['c1', 'c2'],
    calls: { session: 12, api_key: 1, agent: 90 },
    runs: [],
    searches: [],
  },
};

beforeAll(async () => {
  const config = testConfig();
  deps = await testDeps({ ...config, platformMetrics: { ...config.platformMetrics, flushIntervalMs: 3_600_000 } });
  api = await startApi({ deps });
  [a, b] = await Promise.all([adminTenant('metrics-a'), adminTenant('metrics-b')]);
  for (const [ago, seed] of Object.entries(seeded)) await seedDay(a.tenantId, daysAgo(Number(ago)), seed);
  // A search a millisecond before the seeded days, and one at the first instant of today: neither is theirs.
  await withTenant(deps.db, a.tenantId, (trx) =>
    trx('search_queries').insert([
      { tenant_id: a.tenantId, query: 'edge', result_count: 0, took_ms: 1, created_at: `${daysAgo(3)}T00:00:00Z` },
      { tenant_id: a.tenantId, query: 'edge', result_count: 0, took_ms: 1, created_at: `${today}T00:00:00Z` },
    ]),
  );
  await withTenant(deps.db, a.tenantId, (trx) =>
    trx('entities').insert([
      {
        tenant_id: a.tenantId,
        service_id: 'full',
        name: 'full',
        type: 'service',
        owner: 'team-a',
        tier: 'tier1',
        readme: '# x',
      },
      { tenant_id: a.tenantId, service_id: 'bare', name: 'bare', type: 'service' },
    ]),
  );
}, 30_000);

afterAll(() => api?.close());

const expectedDay = (ago: number, catalog: unknown) => {
  const seed = seeded[ago];
  return {
    day: daysAgo(ago),
    partial: false,
    active_users: seed.users.length,
    agents_connected: seed.agents.length,
    api_calls: seed.calls,
    searches: seed.searches.length + (ago === 3 ? 1 : 0),
    zero_result_searches: seed.searches.filter((n) => n === 0).length + (ago === 3 ? 1 : 0),
    catalog,
  };
};
const CATALOG = {
  entities: 2,
  with_owner: 1,
  with_docs: 1,
  with_tier: 1,
  owner_share: 0.5,
  docs_share: 0.5,
  tier_share: 0.5,
};

describe('the rollup', () => {
  test("rolls up each seeded day to its raw rows' counts, including the day of a night the schedule missed", async () => {
    const tenant = { id: a.tenantId, created: LONG_AGO };
    // The night three days ago's day closed: it rolls up that day alone (a backfill of 1).
    expect(await rollUpTenant(deps.db, tenant, daysAgo(2), 1)).toBe(1);
    // The next night's run never happened; tonight's rolls up the day it missed and yesterday.
    expect(await rollUpTenant(deps.db, tenant, today, 30)).toBe(2);

    const res = await get(a.admin, `?from=${daysAgo(3)}&to=${daysAgo(1)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: daysAgo(3), to: daysAgo(1) });
    expect(res.body.days).toEqual([
      // The catalog of a day rolled up when it had passed is gone: null, not today's.
      { ...expectedDay(3, CATALOG), forge_runs: expect.any(Array) },
      { ...expectedDay(2, null), forge_runs: expect.any(Array) },
      { ...expectedDay(1, CATALOG), forge_runs: [] },
    ]);
    expect(res.body.days[0].forge_runs).toEqual([
      { mold: 'deploy', outcome: 'completed', count: 2, duration_p50_ms: 2_000, duration_p95_ms: 2_900 },
      { mold: 'deploy', outcome: 'failed', count: 1, duration_p50_ms: 500, duration_p95_ms: 500 },
    ]);
    expect(res.body.days[1].forge_runs).toEqual([
      { mold: 'scaffold', outcome: 'running', count: 1, duration_p50_ms: null, duration_p95_ms: null },
    ]);
  });

  test('running a day again replaces its figures, never adds to them, and keeps the catalog it took', async () => {
    await seedDay(a.tenantId, daysAgo(1), {
      users: [],
      agents: [],
      calls: {} as SeededDay['calls'],
      runs: [],
      searches: [0],
    });
    // The latest two days again: the day before yesterday keeps its catalog, null (missed).
    expect(await rollUpTenant(deps.db, { id: a.tenantId, created: LONG_AGO }, today, 30)).toBe(2);
    const res = await get(a.admin, `?from=${daysAgo(2)}&to=${daysAgo(1)}`);
    expect(res.body.days).toEqual([
      { ...expectedDay(2, null), forge_runs: expect.any(Array) },
      { ...expectedDay(1, CATALOG), forge_runs: [], searches: 1, zero_result_searches: 1 },
    ]);
    // Rolled up again (as of two days ago) without a snapshot, the oldest day keeps the one it took.
    expect(await rollUpTenant(deps.db, { id: a.tenantId, created: LONG_AGO }, daysAgo(1), 30)).toBe(2);
    const kept = await get(a.admin, `?from=${daysAgo(3)}&to=${daysAgo(3)}`);
    expect(kept.body.days).toEqual([{ ...expectedDay(3, CATALOG), forge_runs: expect.any(Array) }]);
  });
});

describe('today', () => {
  test('is computed live from the calls, searches and runs of today, with partial: true', async () => {
    const c = await adminTenant('metrics-live');
    await callApi(api, c.admin, 'GET', '/entities');
    await callApi(api, c.editor, 'GET', '/entities');
    const key = await callApi(api, c.admin, 'POST', '/admin/api-keys', { name: 'metrics', scopes: ['catalog:read'] });
    expect(key.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await callApi(api, key.body.token, 'GET', '/entities')).status).toBe(200);
    const cluster = await callApi(api, c.admin, 'POST', '/k8s/agents/register', {
      cluster_id: 'metrics-cluster',
      display_name: 'metrics',
    });
    expect(cluster.status).toBe(201);
    for (let i = 0; i < 2; i++)
      expect(
        (await callApi(api, cluster.body.token, 'POST', '/k8s/agents/heartbeat', { agent_version: '1', node_count: 1 }))
          .status,
      ).toBe(200);
    expect((await callApi(api, c.admin, 'GET', '/search?q=nothing-matches-this')).status).toBe(200);
    await api.deps.platformActivity.flush();
    const started = new Date();
    await withTenant(deps.db, c.tenantId, (trx) =>
      trx('runs').insert({
        tenant_id: c.tenantId,
        mold_slug: 'deploy',
        mold_version: 1,
        mold_snapshot: {},
        parameters: {},
        started_by: 'platform-metrics-test',
        workflow_id: `platform-metrics-test-${randomUUID()}`,
        status: 'completed',
        started_at: started,
        finished_at: new Date(started.getTime() + 1_500),
      }),
    );

    const res = await get(c.admin, `?from=${today}`);
    expect(res.status).toBe(200);
    expect(res.body.days).toEqual([
      {
        day: today,
        partial: true,
        active_users: 2,
        agents_connected: 1,
        api_calls: { session: 5, api_key: 3, agent: 2 },
        forge_runs: [
          { mold: 'deploy', outcome: 'completed', count: 1, duration_p50_ms: 1_500, duration_p95_ms: 1_500 },
        ],
        searches: 1,
        zero_result_searches: 1,
        catalog: {
          entities: 0,
          with_owner: 0,
          with_docs: 0,
          with_tier: 0,
          owner_share: null,
          docs_share: null,
          tier_share: null,
        },
      },
    ]);
  });

  test("counts only today's own rows: the search at its first instant, not yesterday's", async () => {
    const res = await get(a.admin);
    expect(res.body).toMatchObject({ from: daysAgo(29), to: today });
    const live = res.body.days.at(-1);
    expect(live).toMatchObject({ day: today, partial: true, searches: 1, zero_result_searches: 1, catalog: CATALOG });
  });
});

describe('the route', () => {
  test.each([
    ['from after to', `?from=${daysAgo(1)}&to=${daysAgo(2)}`, 'from'],
    ['367 days', `?from=${daysAgo(366)}&to=${today}`, 'from'],
    ['to after today', `?to=${addDays(today, 1)}`, 'to'],
    ['not a calendar date', '?from=2026-02-30', 'from'],
    ['not a date at all', '?from=yesterday', 'query.from'],
  ])('answers a 400 for %s', async (_, query, field) => {
    const res = await get(a.admin, query);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  });

  test('takes a year of 366 days', async () => {
    expect((await get(a.admin, `?from=${daysAgo(365)}`)).status).toBe(200);
  });

  test('is for admins (admin:read): an editor and a viewer get 403', async () => {
    expect((await get(a.editor)).status).toBe(403);
    expect((await get(a.viewer)).status).toBe(403);
  });

  test("shows a tenant its own figures only: another tenant's rollup and raw rows are not there", async () => {
    const res = await get(b.admin, `?from=${daysAgo(3)}`);
    expect(res.status).toBe(200);
    expect(res.body.days).toHaveLength(1);
    expect(res.body.days[0]).toMatchObject({
      day: today,
      searches: 0,
      forge_runs: [],
      catalog: { entities: 0 },
      api_calls: { api_key: 0, agent: 0 },
    });
  });
});
