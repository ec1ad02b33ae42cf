import { randomUUID } from 'node:crypto';
import { createPool } from '../../db/pool';
import { seedCatalog } from '../../scripts/cli/seedCatalog';
import { callApi, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// Statistics are bounded per tenant: one tenant flooding an aggregate read cannot take the pool
// from another tenant. The pool is small and its acquire timeout short, so a flood that held a
// connection per request would leave tenant B's requests waiting past it (503s).
const run = randomUUID().slice(0, 8);
let api: TestApi;
let viewerA: { token: string };
let viewerB: { token: string };
let seededTenant: string;

beforeAll(async () => {
  const config = testConfig();
  ({ tenantId: seededTenant } = await seedCatalog(config, { tenant: `agg-a-${run}`, entities: 20_000 }));
  const api_ = { ...config.limits.database.api, acquireTimeoutMs: 500 };
  api = await startApi({
    deps: await testDeps({
      ...config,
      database: { ...config.database, poolMax: 3 },
      limits: { ...config.limits, database: { ...config.limits.database, api: api_ } },
    }),
  });
  viewerA = await sessionToken({ tenant: `agg-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
  viewerB = await sessionToken({ tenant: `agg-b-${run}`, email: 'viewer@b.test', roles: ['viewer'] });
}, 120_000);
afterAll(async () => {
  await api.close();
  // The seeded entities are never searched: their outbox rows would only slow other suites' drains.
  const system = createPool(testConfig().database.systemUrl, 1);
  await system('search_outbox').where({ tenant_id: seededTenant }).delete();
  await system.destroy();
});

test("100 concurrent /stats/languages of tenant A answer 2xx/429/503, never 500, while every one of tenant B's simple requests answers 2xx", async () => {
  // Both callers known to the process first, so the flood measures the statistics alone.
  expect((await callApi(api, viewerA.token, 'GET', '/me')).status).toBe(200);
  expect((await callApi(api, viewerB.token, 'GET', '/me')).status).toBe(200);

  const flood = Array.from({ length: 100 }, () => callApi(api, viewerA.token, 'GET', '/stats/languages'));
  const others = Array.from({ length: 20 }, () => callApi(api, viewerB.token, 'GET', '/entities?limit=1'));
  const [fromA, fromB] = await Promise.all([Promise.all(flood), Promise.all(others)]);

  expect(fromB.map((res) => res.status).filter((status) => status >= 300)).toEqual([]);
  expect(fromA.map((res) => res.status).filter((status) => ![200, 429, 503].includes(status))).toEqual([]);
  const answered = fromA.find((res) => res.status === 200);
  expect(answered?.body.languages.length).toBeGreaterThan(0);
});

test('a cached answer is the same for every caller of the tenant, and another tenant gets its own (empty) statistics', async () => {
  const first = await callApi(api, viewerA.token, 'GET', '/stats/languages');
  const again = await callApi(api, viewerA.token, 'GET', '/stats/languages');
  expect(again.body).toEqual(first.body);
  expect((await callApi(api, viewerB.token, 'GET', '/stats/languages')).body).toEqual({ languages: [] });
  expect((await callApi(api, viewerB.token, 'GET', '/stats')).body.total_entities).toBe(0);
});
