import { exchangeSlots } from '../../core/forge/slotStore';
import { reconcileUnfinishedRuns } from '../../core/forge/runReconciliation';
import { forgeWorkflowId, RECONCILE_SCHEDULE_ID } from '../../core/forge/types';
import { TASK_QUEUES } from '../../core/taskQueues';
import { withTenant } from '../../db/tenancy';
import { setForgeLimits } from '../../scripts/cli/forgeLimits';
import { forgeCaller, useForgeSuite } from '../support/forgeRuns';
import { bearer, sessionToken, testConfig } from '../support/harness';
import { startTarget, type Target } from '../support/httpTarget';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, until } from '../support/processes';
import { payloadsIn } from '../support/payloads';

// Fair sharing of the forge pool through HTTP, with a real forge worker: a tenant's running runs
// and starts are limited (its own limits, set as an operator does with `shipyard forge-limits`),
// another tenant never waits for them; parameters are capped; runs whose workflow Temporal
// closed are reconciled.

const forge = useForgeSuite();
const { call, createMold, startRun, waitForStatus, storeRunWithoutWorkflow } = forge;

let slow: Target;
let fast: Target;
beforeAll(async () => {
  [slow, fast] = await Promise.all([startTarget(), startTarget()]);
  // Long enough that the other tenant's run ends while the first runs still hold their slots.
  slow.delayMs = 8_000;
});
afterAll(() => Promise.all([slow.close(), fast.close()]));

const tenantSlug = () => `forge-${forge.suite.run}`;

/** Another tenant's admin, in its own tenant (`tenant`: its slug). */
async function otherTenant(name: string) {
  const tenant = `forge-${name}-${forge.suite.run}`;
  const { token } = await sessionToken({ tenant, email: 'dev@other.test', roles: ['admin'] });
  return { tenant, token, ...forgeCaller(forge.suite.api, token) };
}

afterEach(() =>
  setForgeLimits(testConfig(), { tenant: tenantSlug(), override: { runningRuns: null, runStartsPerMinute: null } }),
);

test("a tenant over its running runs waits pending, in order, while another tenant's run completes at once; the queued runs complete as slots free", async () => {
  await setForgeLimits(testConfig(), { tenant: tenantSlug(), override: { runningRuns: 2 } });
  const mold = await createMold({ actions: [{ name: 'slow', type: 'api-call', config: { url: `${slow.url}/slow` } }] });
  const runs = [];
  for (let i = 0; i < 4; i += 1) runs.push(await startRun(mold.slug));
  await until('two runs calling the slow target', 30, async () => (slow.requests.length === 2 ? true : undefined));

  const other = await otherTenant('b');
  const otherMold = await other.createMold({
    actions: [{ name: 'fast', type: 'api-call', config: { url: `${fast.url}/fast` } }],
  });
  const otherRun = await other.startRun(otherMold.slug);
  expect((await other.finished(otherRun.id)).status).toBe('completed');

  const queued = await Promise.all(
    runs.slice(2).map((run) => call(forge.suite.writer, 'GET', `/forge/runs/${run.id}`)),
  );
  expect(queued.map(({ body }) => body.status)).toEqual(['pending', 'pending']);
  expect(slow.requests).toHaveLength(2);

  const done = await Promise.all(runs.map((run) => waitForStatus(run.id, ['completed', 'failed'], 60)));
  expect(done.map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  const firstEnd = Math.min(...done.slice(0, 2).map((run) => Date.parse(run.finished_at)));
  for (const run of done.slice(2)) expect(Date.parse(run.started_at)).toBeGreaterThanOrEqual(firstEnd);
}, 90_000);

test("starting runs faster than the tenant's rate answers 429 RATE_LIMITED with Retry-After; another tenant is not limited", async () => {
  const limited = await otherTenant('r');
  await setForgeLimits(testConfig(), { tenant: limited.tenant, override: { runStartsPerMinute: 2 } });
  const mold = await limited.createMold({ actions: [] });
  await limited.startRun(mold.slug);
  await limited.startRun(mold.slug);
  const res = await fetch(`${forge.suite.api.url}/api/v1/forge/runs`, {
    method: 'POST',
    headers: { ...bearer(limited.token), 'content-type': 'application/json' },
    body: JSON.stringify({ mold_slug: mold.slug, parameters: {} }),
  });
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');

  const other = await otherTenant('s');
  const otherMold = await other.createMold({ actions: [] });
  for (let i = 0; i < 3; i += 1) await other.startRun(otherMold.slug);
});

test("an operator sets and clears a tenant's limits with `shipyard forge-limits`, which prints the limits in force", async () => {
  const shipyard = (args: string[]) =>
    promisify(execFile)(
      path.join(ROOT, 'scripts', 'shipyard.js'),
      ['forge-limits', '--tenant', tenantSlug(), ...args],
      {
        encoding: 'utf8',
      },
    );
  const defaults = testConfig().forge;
  expect((await shipyard(['--running-runs', '3', '--run-starts-per-minute', '7'])).stdout).toContain(
    `3 running runs, ${defaults.actionSlotsPerTenant} concurrent actions, 7 run starts a minute`,
  );
  expect((await shipyard(['--running-runs', 'default', '--run-starts-per-minute', 'default'])).stdout).toContain(
    `${defaults.runningRunsPerTenant} running runs, ${defaults.actionSlotsPerTenant} concurrent actions, ${defaults.runStartsPerMinute} run starts a minute`,
  );
  await expect(shipyard(['--running-runs', '0'])).rejects.toMatchObject({ code: 2 });
}, 30_000);

test('parameters over SHIPYARD_FORGE_PARAMETERS_MAX_BYTES answer 413 naming the limit, and no run is created', async () => {
  const mold = await createMold({ parameters: [{ name: 'blob', type: 'string' }], actions: [] });
  const limit = testConfig().forge.parametersMaxBytes;
  const { status, body } = await call(forge.suite.writer, 'POST', '/forge/runs', {
    mold_slug: mold.slug,
    parameters: { blob: 'x'.repeat(limit) },
  });
  expect(status).toBe(413);
  expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
  expect(body.error.message).toContain('SHIPYARD_FORGE_PARAMETERS_MAX_BYTES');
  const { body: list } = await call(forge.suite.writer, 'GET', `/forge/runs?mold_slug=${mold.slug}`);
  expect(list.runs).toEqual([]);
});

test("parameters reach every action but not the run's workflow history, even decrypted: however many steps, the actions read them from the run", async () => {
  const mark = randomUUID();
  const blob = `${mark}-${'x'.repeat(4096)}`;
  const mold = await createMold({
    parameters: [{ name: 'blob', type: 'string', required: true }],
    actions: [0, 1, 2].map((i) => ({
      name: `send-${i}`,
      type: 'api-call',
      config: { method: 'POST', url: `${fast.url}/blob-${i}`, body: { blob: '${{ parameters.blob }}' } },
    })),
  });
  const run = await startRun(mold.slug, { blob });
  expect((await waitForStatus(run.id, ['completed', 'failed'])).status).toBe('completed');
  expect(fast.requests.filter((request) => request.body.includes(blob))).toHaveLength(3);

  const { temporal, payloadCodec } = forge.suite.api.deps;
  const history = await temporal.workflow.getHandle(forgeWorkflowId(run.id)).fetchHistory();
  const decoded = await payloadCodec.decode(payloadsIn(history));
  const texts = decoded.map((payload) => Buffer.from(payload.data ?? []).toString('utf8'));
  // The run's input and each action's are there, decrypted; the parameter is in none of them.
  expect(texts.filter((text) => text.includes('"name":"send-2"'))).toHaveLength(2);
  expect(texts.filter((text) => text.includes(mark))).toEqual([]);
}, 30_000);

describe('runs whose workflow Temporal closed', () => {
  /** A run calling the slow target, whose workflow is then terminated as Temporal does past its limits. */
  async function zombieRun() {
    const mold = await createMold({ actions: [{ name: 'slow', type: 'api-call', config: { url: `${slow.url}/z` } }] });
    const run = await startRun(mold.slug);
    await waitForStatus(run.id, ['running']);
    await forge.suite.api.deps.temporal.workflow
      .getHandle(forgeWorkflowId(run.id))
      .terminate('Workflow history size exceeds limit.');
    return run;
  }

  test('the reconciliation ends such a run failed with the reason Temporal gave, its running step failed', async () => {
    const run = await zombieRun();
    const { db, system, temporal } = forge.suite.api.deps;
    expect(await reconcileUnfinishedRuns({ db, system, temporal })).toBeGreaterThanOrEqual(1);
    const { body } = await call(forge.suite.viewer, 'GET', `/forge/runs/${run.id}`);
    expect(body.status).toBe('failed');
    expect(body.error).toMatch(/terminated \(Workflow history size exceeds limit\.\)/);
    expect(body.steps[0]).toMatchObject({ status: 'failed' });
  }, 30_000);

  test("the forge pool's schedule reconciles such runs on its own: it runs reconcileForgeRuns on the forge queue at the configured interval", async () => {
    const run = await zombieRun();
    const schedule = forge.suite.api.deps.temporal.schedule.getHandle(RECONCILE_SCHEDULE_ID);
    const description = await schedule.describe();
    expect(description.spec.intervals?.map((interval) => interval.every)).toEqual([
      testConfig().forge.reconcileIntervalMs,
    ]);
    expect(description.action).toEqual(
      expect.objectContaining({ workflowType: 'reconcileForgeRuns', taskQueue: TASK_QUEUES.forge }),
    );
    await schedule.trigger();
    expect((await waitForStatus(run.id, ['failed'])).error).toMatch(/terminated/);
  }, 30_000);

  test('a cancel of such a run reconciles it (200, the run failed with the reason) instead of answering 409', async () => {
    const run = await zombieRun();
    const { status, body } = await call(forge.suite.writer, 'POST', `/forge/runs/${run.id}/cancel`, {});
    expect(status).toBe(200);
    expect(body.status).toBe('failed');
    expect(body.error).toMatch(/terminated/);
  }, 30_000);
});

describe('slots of the forge_slots table', () => {
  const exchange = (runId: string, change: { release?: 'action'[]; acquire?: 'action'[]; leaseSeconds?: number }) =>
    withTenant(forge.suite.api.deps.db, forge.suite.writerTenantId, (trx) =>
      exchangeSlots(trx, {
        tenantId: forge.suite.writerTenantId,
        runId,
        workflowId: forgeWorkflowId(runId),
        release: change.release ?? [],
        acquire: change.acquire ?? [],
        terms: () => ({ defaultLimit: 1, leaseSeconds: change.leaseSeconds ?? 60, waitSeconds: 60 }),
      }),
    );
  const request = async (runId: string, leaseSeconds?: number) =>
    (await exchange(runId, { acquire: ['action'], leaseSeconds })).granted.length === 1;
  const release = async (runId: string) => (await exchange(runId, { release: ['action'] })).wake;

  test('requests are served in order: a release names the oldest waiting run, and a later request does not pass it, even one exchanging its own slot', async () => {
    const [holder, first, second] = [
      await storeRunWithoutWorkflow(),
      await storeRunWithoutWorkflow(),
      await storeRunWithoutWorkflow(),
    ];
    expect(await request(holder)).toBe(true);
    expect(await request(first)).toBe(false);
    expect(await request(second)).toBe(false);
    expect(await release(holder)).toEqual([forgeWorkflowId(first)]);
    expect(await request(second)).toBe(false);
    expect(await request(first)).toBe(true);
    // Giving its slot back and asking again in one exchange, it queues behind the older request.
    expect(await exchange(first, { release: ['action'], acquire: ['action'] })).toEqual({
      granted: [],
      wake: [forgeWorkflowId(second)],
    });
    expect(await request(second)).toBe(true);
    await Promise.all([release(first), release(second)]);
  });

  test('an action slot is a lease: one whose holder never gave it back frees itself when it expires', async () => {
    const [holder, waiter] = [await storeRunWithoutWorkflow(), await storeRunWithoutWorkflow()];
    expect(await request(holder, 1)).toBe(true);
    expect(await request(waiter)).toBe(false);
    expect(await until('the lease to expire', 10, async () => (await request(waiter)) || undefined)).toBe(true);
    await release(waiter);
  });
});
