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
import pino from 'pino';
import { ChangeListener } from '../../db/notifications';
import { until } from '../support/processes';

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
    expect(body.services.database.pool).toEqual(
      expect.objectContaining({ max: api.deps.config.database.poolMax, pending: 0, saturated: false }),
    );
    expect(body.services.change_listener).toEqual({ status: 'up' });
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

test('a LISTEN connection that cannot connect from the start is logged once, retried, and shown down in /system', async () => {
  const lines: { msg: string; level: number }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const listener = new ChangeListener('postgres://nobody:nobody@127.0.0.1:1/nothing', logger);
  await listener.start();
  // Two more attempts (one a second) add no line of their own.
  await until('two more attempts', 10, async () =>
    listener.outage && Date.now() - +listener.outage.since > 2_100 ? true : undefined,
  );
  expect(lines.filter((line) => line.msg.startsWith('change listener down'))).toHaveLength(1);
  expect(listener.listening).toBe(false);

  const deps = await testDeps();
  await deps.changes.close();
  const api = await startApi({ deps: { ...deps, changes: listener } });
  try {
    const body = await jsonOf(await fetch(`${api.url}/api/v1/system`, { headers: auth }));
    expect(body.status).toBe('degraded');
    expect(body.services.change_listener).toEqual({
      status: 'down',
      down_since: listener.outage!.since.toISOString(),
      error: expect.stringContaining('ECONNREFUSED'),
    });
  } finally {
    await api.close();
  }
}, 30_000);

describe('with a pool stopped or Temporal unreachable', () => {
  test('a pool without a worker is reported down and the system degraded', async () => {
    const workers = await startWorkers(['forge', 'search']);
    const api = await startApi();
    try {
      const body = await jsonOf(await fetch(`${api.url}/api/v1/system`, { headers: auth }));
      expect(body.status).toBe('degraded');
      expect(body.worker_pools.forge.status).toBe('up');
      expect(body.worker_pools.platform).toEqual(
        expect.objectContaining({ status: 'down', error: expect.any(String) }),
      );
    } finally {
      await api.close();
      await workers.stop();
    }
  }, 30_000);

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
  }, 30_000);
});

describe('with every connection of the API pool taken by requests', () => {
  test('/system still reports the database up, checked outside the pool, and the pool saturated with requests waiting', async () => {
    // Requests wait in line, and connections are held, as long as the test needs: past the
    // API's acquire and idle-in-transaction timeouts, which are not what it is about.
    const config = testConfig();
    const patient = { ...config.limits.database.api, acquireTimeoutMs: 60_000, idleInTransactionTimeoutMs: 60_000 };
    const limits = { ...config.limits, database: { ...config.limits.database, api: patient } };
    const api = await startApi({ deps: await testDeps({ ...config, limits }) });
    const { pool } = api.deps.db.client;
    const max = api.deps.config.database.poolMax;
    const released: (() => void)[] = [];
    /** A transaction that holds its connection until released; resolves once it holds it. */
    const holdConnection = () =>
      new Promise<void>((holding) => {
        void api.deps.db.transaction(async (trx) => {
          await trx.raw('select 1');
          holding();
          await new Promise<void>((release) => released.push(release));
        });
      });
    const pendingAcquires = (count: number) =>
      until(`${count} requests waiting for a connection`, 20, async () =>
        pool.numPendingAcquires() === count ? true : undefined,
      );
    try {
      await Promise.all(Array.from({ length: max }, holdConnection));
      // The request's authentication needs a connection of the pool too (its caller is read in
      // its tenant's transaction). It queues first; two more queue behind it. Freeing one
      // connection serves the authentication, which hands it on to the next in line, so the
      // health check runs with every connection taken and one more request waiting.
      const answer = fetch(`${api.url}/api/v1/system`, { headers: auth });
      await pendingAcquires(1);
      const waiting = [holdConnection(), holdConnection()];
      await pendingAcquires(3);
      released.shift()!();
      const body = await jsonOf(await answer);

      expect(body.services.database.status).toBe('up');
      expect(body.services.database.pool).toEqual({ max, used: max, free: 0, pending: 1, saturated: true });
      released.shift()!();
      await Promise.all(waiting);
    } finally {
      for (const release of released) release();
      await api.close();
    }
  }, 30_000);
});
