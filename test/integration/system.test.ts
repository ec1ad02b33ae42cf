import {
  bearer,
  jsonOf,
  sessionToken,
  startApi,
  startWorkers,
  testConfig,
  testDeps,
  type TestApi,
  type TestWorkers,
} from '../support/harness';

let auth: Record<string, string>;
beforeAll(async () => {
  auth = bearer((await sessionToken({ tenant: 'system-test', email: 'ops@system.test', roles: ['admin'] })).token);
});

// GET /api/v1/system against the real services, with real workers on the test namespace.
describe('with every worker pool running', () => {
  let api: TestApi;
  let workers: TestWorkers;
  beforeAll(async () => {
    workers = await startWorkers(['forge', 'search', 'platform']);
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
    await workers.stop();
  });

  test('every service and pool is up, each pool proven by a workflow whose activity wrote to the database', async () => {
    const before = new Date();
    const res = await fetch(`${api.url}/api/v1/system`, { headers: auth });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body.status).toBe('ok');
    for (const service of ['database', 'elasticsearch', 'temporal']) {
      expect(body.services[service]).toEqual(expect.objectContaining({ status: 'up', latency_ms: expect.any(Number) }));
    }
    // A tenant admin: the Temporal UI shows every tenant's workflows, so its address is for operators.
    expect(body.services.temporal).not.toHaveProperty('ui_url');

    const probes = await api.deps.db('worker_probes').select();
    for (const pool of ['forge', 'search', 'platform']) {
      expect(body.worker_pools[pool]).toEqual(
        expect.objectContaining({ status: 'up', task_queue: `shipyard-${pool}`, worker_identity: expect.any(String) }),
      );
      const probe = probes.find((row) => row.pool === pool);
      expect(probe.worker_identity).toBe(body.worker_pools[pool].worker_identity);
      expect(new Date(probe.probed_at).getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    }
  });
});

describe('with a pool stopped or Temporal unreachable', () => {
  test('a pool without a worker is reported down and the system degraded, within the probe timeout', async () => {
    const workers = await startWorkers(['forge', 'search']);
    const api = await startApi();
    try {
      const started = Date.now();
      const body = await jsonOf(await fetch(`${api.url}/api/v1/system`, { headers: auth }));
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(body.status).toBe('degraded');
      expect(body.worker_pools.forge.status).toBe('up');
      expect(body.worker_pools.platform).toEqual(
        expect.objectContaining({ status: 'down', error: expect.any(String) }),
      );
    } finally {
      await api.close();
      await workers.stop();
    }
  });

  test('an unreachable Temporal is reported down, with every pool down, while the other services stay up', async () => {
    const config = testConfig();
    const deps = await testDeps({ ...config, temporal: { ...config.temporal, address: '127.0.0.1:1' } });
    const api = await startApi({ deps });
    try {
      const body = await jsonOf(await fetch(`${api.url}/api/v1/system`, { headers: auth }));
      expect(body.status).toBe('degraded');
      expect(body.services.temporal.status).toBe('down');
      expect(body.services.database.status).toBe('up');
      expect(body.services.elasticsearch.status).toBe('up');
      expect(Object.values(body.worker_pools).map((p) => (p as { status: string }).status)).toEqual([
        'down',
        'down',
        'down',
      ]);
    } finally {
      await api.close();
    }
  });
});
