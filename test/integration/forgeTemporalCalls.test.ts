import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import type { Knex } from 'knex';
import { encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { useForgeSuite } from '../support/forgeRuns';
import { testConfig, testDeps, type TestApi } from '../support/harness';
import { until } from '../support/processes';

// Starting a run and deciding on one call Temporal with no database connection held: the
// API's Temporal client here lets a test hold its calls (or make them fail) at will.

/** Calls of one kind (start or signal) that the test holds until it lets them go, or fails. */
class Valve {
  waiting = 0;
  failing = false;
  private open = Promise.resolve();
  private release = () => {};
  hold() {
    this.open = new Promise((resolve) => (this.release = resolve));
  }
  letGo() {
    this.release();
  }
  async pass<T>(next: () => Promise<T>): Promise<T> {
    if (this.failing) throw new Error('temporal refused the call (test)');
    this.waiting++;
    try {
      await this.open;
    } finally {
      this.waiting--;
    }
    return next();
  }
}

/** The writer starts and decides: the gate lets the starter approve (forgeApprovals.test.ts covers who may). */
const SELF_APPROVED_GATE = { name: 'gate', type: 'approval', approvers: { allow_self_approval: true } };

const starts = new Valve();
const signals = new Valve();
const valves: WorkflowClientInterceptor = {
  start: (input, next) => starts.pass(() => next(input)),
  signal: (input, next) => signals.pass(() => next(input)),
};

const forge = useForgeSuite({
  deps: async () => {
    // One tenant's starts outnumber the pool here: its share of the process must not cap them first.
    const config = testConfig();
    const requests = { ...config.limits.requests, concurrentPerTenant: 100 };
    const deps = await testDeps({ ...config, limits: { ...config.limits, requests } });
    deps.temporal = new Client({
      connection: deps.temporal.connection,
      namespace: deps.config.temporal.namespace,
      dataConverter: encryptedDataConverter(deps.payloadCodec),
      interceptors: { workflow: [valves] },
    });
    return deps;
  },
});
const { call, createMold, startRun, waitForGate, waitForStatus } = forge;
let api: TestApi;
let writer: string;
beforeAll(() => ({ api, writer } = forge.suite));
afterEach(() => {
  starts.letGo();
  signals.letGo();
  starts.failing = signals.failing = false;
});

const poolInUse = (db: Knex) => (db.client as { pool: { numUsed(): number } }).pool.numUsed();

test('more run starts than the pool has connections wait on Temporal at once, holding none: the pool stays idle and serves other requests', async () => {
  const mold = await createMold({ actions: [{ name: 'noop', type: 'script', config: { script: 'true' } }] });
  const concurrent = api.deps.config.database.poolMax + 2;
  starts.hold();
  const replies = Array.from({ length: concurrent }, () =>
    call(writer, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {} }),
  );
  await until('every start waiting on Temporal', 30, async () => starts.waiting === concurrent || undefined);

  expect(poolInUse(api.deps.db)).toBe(0);
  const list = await call(writer, 'GET', `/forge/runs?mold_slug=${mold.slug}`);
  expect(list.status).toBe(200);
  // Each run is committed before its workflow is started.
  expect(list.body.pagination.total_count).toBe(concurrent);

  starts.letGo();
  expect((await Promise.all(replies)).map((r) => r.status)).toEqual(Array(concurrent).fill(201));
}, 60_000);

test('a decision waits on Temporal holding no connection; it is answered once the signal is sent', async () => {
  const started = await startRun((await createMold({ actions: [SELF_APPROVED_GATE] })).slug);
  await waitForGate(started.id, 0);
  signals.hold();
  const approving = call(writer, 'POST', `/forge/runs/${started.id}/approve`);
  await until('the approve waiting on Temporal', 30, async () => signals.waiting === 1 || undefined);
  expect(poolInUse(api.deps.db)).toBe(0);
  signals.letGo();
  expect((await approving).status).toBe(200);
  expect((await waitForStatus(started.id, ['completed', 'failed'])).status).toBe('completed');
}, 60_000);

test('a workflow that cannot be started: 503, and the run is failed with the reason rather than left pending', async () => {
  const mold = await createMold({ actions: [{ name: 'noop', type: 'script', config: { script: 'true' } }] });
  starts.failing = true;
  const res = await call(writer, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {} });
  expect(res.status).toBe(503);
  expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
  const [runId] = res.body.error.details.map((d: { message: string }) => d.message);
  const run = (await call(writer, 'GET', `/forge/runs/${runId}`)).body;
  expect(run).toEqual(
    expect.objectContaining({ status: 'failed', error: expect.stringMatching(/^the run was not started: /) }),
  );
  expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['skipped']);
}, 60_000);

test('a decision whose signal cannot be sent is withdrawn: 503, nothing recorded, and the step still takes a decision', async () => {
  const started = await startRun((await createMold({ actions: [SELF_APPROVED_GATE] })).slug);
  await waitForGate(started.id, 0);
  signals.failing = true;
  const refused = await call(writer, 'POST', `/forge/runs/${started.id}/cancel`);
  expect(refused.status).toBe(503);
  expect((await call(writer, 'GET', `/forge/runs/${started.id}`)).body.decisions).toEqual([]);
  signals.failing = false;
  expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
  expect((await waitForStatus(started.id, ['completed', 'failed', 'cancelled'])).status).toBe('completed');
}, 60_000);
