import { randomUUID } from 'node:crypto';
import { failUnstartedRun } from '../../core/forge/runStore';
import { FORGE_RUN_VERSION, forgeWorkflowId, type RunStepSpec } from '../../core/forge/types';
import { withTenant } from '../../db/tenancy';
import { TASK_QUEUES } from '../../core/taskQueues';
import { useForgeSuite } from '../support/forgeRuns';
import { closedPortUrl, startTarget, type Target } from '../support/httpTarget';
import { sessionToken, type TestApi } from '../support/harness';

// Runs through HTTP, executed by a real forge worker on the real Temporal server: actions,
// parameters, tenancy, the run list and stats.

const forge = useForgeSuite();
const { call, createMold, startRun, logMessages, waitForStatus, storeRunWithoutWorkflow } = forge;
let api: TestApi;
let run: string;
let writer: string;
let writerTenantId: string;
beforeAll(() => ({ api, run, writer, writerTenantId } = forge.suite));

// A secret-looking variable of this process, where the in-process workers run scripts: the
// scripts must not see it.
const FAKE_SECRET = `not-for-scripts-${process.pid}`;
let target: Target;
beforeAll(async () => {
  process.env.SHIPYARD_FAKE_SECRET = FAKE_SECRET;
  target = await startTarget();
});
afterAll(async () => {
  delete process.env.SHIPYARD_FAKE_SECRET;
  await target.close();
});

describe('runs', () => {
  test("a three-action mold runs to completed, with templated parameters, per-step statuses and logs (no Temporal UI link for tenant users); scripts get PARAM_ variables but not the worker's environment", async () => {
    target.status = 200;
    const mold = await createMold({
      parameters: [
        { name: 'service', type: 'string', required: true },
        { name: 'replicas', type: 'number', default: 2 },
      ],
      actions: [
        {
          name: 'announce',
          type: 'api-call',
          config: {
            method: 'POST',
            url: `${target.url}/hooks/\${{ parameters.service }}`,
            body: { replicas: '${{ parameters.replicas }}' },
          },
        },
        {
          name: 'build',
          type: 'script',
          config: {
            script: 'echo "building $PARAM_SERVICE x$PARAM_REPLICAS"; echo "secret=${SHIPYARD_FAKE_SECRET:-none}"',
          },
        },
        { name: 'check', type: 'api-call', config: { url: `${target.url}/health` } },
      ],
    });
    const started = await startRun(mold.slug, { service: 'payments' });
    expect(started.status).toBe('pending');
    expect(started).not.toHaveProperty('temporal_ui_url');
    const done = await waitForStatus(started.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done).not.toHaveProperty('temporal_ui_url');
    expect(done.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['announce', 'completed'],
      ['build', 'completed'],
      ['check', 'completed'],
    ]);
    expect(done.parameters).toEqual({ service: 'payments', replicas: 2 });
    expect(target.requests).toEqual(
      expect.arrayContaining([{ method: 'POST', path: '/hooks/payments', body: JSON.stringify({ replicas: 2 }) }]),
    );
    const messages = await logMessages(started.id);
    expect(messages).toContain('building payments x2');
    // The worker's process has SHIPYARD_FAKE_SECRET set; the script's environment does not.
    expect(process.env.SHIPYARD_FAKE_SECRET).toBe(FAKE_SECRET);
    expect(messages).toContain('secret=none');
  }, 60_000);

  test('a failing api-call is retried up to its max_attempts, then the step and the run fail with the error', async () => {
    const mold = await createMold({
      actions: [
        { name: 'deploy', type: 'api-call', config: { url: `${target.url}/fail-${run}`, max_attempts: 2 } },
        { name: 'after', type: 'script', config: { script: 'echo never' } },
      ],
    });
    target.status = 503;
    try {
      const started = await startRun(mold.slug);
      const done = await waitForStatus(started.id, ['completed', 'failed']);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(/deploy.*503/);
      expect(done.steps[0]).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringMatching(/503/) }));
      expect(done.steps[1].status).toBe('skipped');
      expect(target.requests.filter((r) => r.path === `/fail-${run}`)).toHaveLength(2);
    } finally {
      target.status = 200;
    }
  }, 60_000);

  test('a refused connection (closed port) is retried as a network error up to max_attempts, then the run fails', async () => {
    const mold = await createMold({
      actions: [{ name: 'ping', type: 'api-call', config: { url: `${await closedPortUrl()}/ping`, max_attempts: 2 } }],
    });
    const done = await waitForStatus((await startRun(mold.slug)).id, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toMatch(/GET http:\/\/127\.0\.0\.77:\d+\/ping failed: connect ECONNREFUSED/);
    const messages = await logMessages(done.id);
    expect(messages.filter((m) => m.startsWith('ping: starting api-call'))).toEqual([
      'ping: starting api-call (attempt 1)',
      'ping: starting api-call (attempt 2)',
    ]);
  }, 60_000);

  test('a URL that renders invalid at run time fails the step at once, without retries', async () => {
    const mold = await createMold({
      parameters: [{ name: 'endpoint', type: 'string', required: true }],
      actions: [
        { name: 'call', type: 'api-call', config: { url: '${{ parameters.endpoint }}/hook', max_attempts: 3 } },
      ],
    });
    const done = await waitForStatus((await startRun(mold.slug, { endpoint: 'nowhere' })).id, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toBe('"nowhere/hook" is not an absolute http(s) URL');
    expect((await logMessages(done.id)).filter((m) => m.startsWith('call: starting'))).toEqual([
      'call: starting api-call (attempt 1)',
    ]);
  }, 60_000);

  test('a script past its time limit is killed and fails without a retry; output past the cap is dropped and flagged', async () => {
    const mold = await createMold({
      actions: [
        {
          name: 'chatty',
          type: 'script',
          config: { script: 'for i in $(seq 1 400); do echo "line $i"; done', max_output_bytes: 1024 },
        },
        { name: 'slow', type: 'script', config: { script: 'echo begun; sleep 30; echo never', timeout_seconds: 1 } },
      ],
    });
    const done = await waitForStatus((await startRun(mold.slug)).id, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.steps[0]).toEqual(
      expect.objectContaining({ status: 'completed', output: { exit_code: 0, truncated: true } }),
    );
    expect(done.steps[1]).toEqual(
      expect.objectContaining({ status: 'failed', error: 'script exceeded its time limit (1 s)' }),
    );
    const messages = await logMessages(done.id);
    expect(messages).toContain('chatty: output truncated at 1024 bytes: 275 more lines (2468 bytes) not stored');
    expect(messages).toContain('line 100');
    expect(messages).not.toContain('line 400');
    expect(messages).toContain('begun');
    expect(messages).not.toContain('never');
    expect(messages.filter((m) => m.startsWith('slow: starting'))).toEqual(['slow: starting script (attempt 1)']);
  }, 60_000);

  test('parameters are checked against the mold: unknown, missing, wrong type and bad option are 400s per field', async () => {
    const mold = await createMold({
      parameters: [
        { name: 'service', type: 'string', required: true },
        { name: 'env', type: 'select', options: ['dev', 'prod'] },
        { name: 'count', type: 'number' },
      ],
    });
    const res = await call(writer, 'POST', '/forge/runs', {
      mold_slug: mold.slug,
      parameters: { env: 'staging', count: 'x', extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'parameters.extra', message: 'is not a parameter of this mold' },
        { field: 'parameters.service', message: 'is required' },
        { field: 'parameters.env', message: 'must be one of: dev, prod' },
        { field: 'parameters.count', message: 'must be a number' },
      ]),
    );
    expect((await call(writer, 'POST', '/forge/runs', { mold_slug: 'no-such-mold', parameters: {} })).status).toBe(404);
  });
  test('runs and molds of one tenant are invisible to another: 404s and empty lists', async () => {
    const mold = await createMold({ actions: [{ name: 'gate', type: 'approval' }] });
    const started = await startRun(mold.slug);
    const other = (await sessionToken({ tenant: `forge-iso-${run}`, email: 'admin@iso.test', roles: ['admin'] })).token;
    expect((await call(other, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
    expect((await call(other, 'GET', `/forge/runs/${started.id}`)).status).toBe(404);
    expect((await call(other, 'GET', `/forge/runs/${started.id}/logs`)).status).toBe(404);
    expect((await call(other, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(404);
    expect((await call(other, 'GET', '/forge/runs')).body.runs).toEqual([]);
    expect((await call(other, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {} })).status).toBe(404);
    await call(writer, 'POST', `/forge/runs/${started.id}/cancel`);
  }, 60_000);
});
describe('list and stats', () => {
  test('GET /forge/runs filters by mold_slug and status, newest first, and pages through next_cursor', async () => {
    const tenant = (await sessionToken({ tenant: `forge-list-${run}`, email: 'dev@list.test', roles: ['admin'] }))
      .token;
    const post = (path: string, body: unknown) => call(tenant, 'POST', path, body);
    await post('/forge/molds', {
      slug: 'quick',
      name: 'quick',
      actions: [{ name: 'a', type: 'script', config: { script: 'true' } }],
    });
    await post('/forge/molds', { slug: 'gated', name: 'gated', actions: [{ name: 'gate', type: 'approval' }] });
    const ids: string[] = [];
    for (const moldSlug of ['quick', 'quick', 'quick', 'gated'])
      ids.push((await post('/forge/runs', { mold_slug: moldSlug, parameters: {} })).body.id);
    const list = async (query: string) => (await call(tenant, 'GET', `/forge/runs?${query}`)).body;
    for (let i = 0; i < 100 && (await list('status=completed')).runs.length < 3; i++)
      await new Promise((resolve) => setTimeout(resolve, 200));

    const quickIds = ids.slice(0, 3).reverse();
    expect((await list('mold_slug=quick')).runs.map((r: { id: string }) => r.id)).toEqual(quickIds);
    expect((await list('status=completed')).runs.map((r: { id: string }) => r.id)).toEqual(quickIds);
    expect((await list('mold_slug=gated&status=completed')).runs).toEqual([]);
    expect((await list('mold_slug=gated')).runs.map((r: { mold_slug: string }) => r.mold_slug)).toEqual(['gated']);

    const first = await list('limit=3');
    expect(first.pagination).toEqual({ total_count: 4, next_cursor: expect.any(String), has_more: true });
    const second = await list(`limit=3&cursor=${first.pagination.next_cursor}`);
    expect(second.pagination).toEqual({ total_count: 4, next_cursor: '', has_more: false });
    expect([...first.runs, ...second.runs].map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    await post(`/forge/runs/${ids[3]}/cancel`, {});
  }, 60_000);

  test('stats count runs by status and give success rate and mean duration per mold', async () => {
    const tenant = (await sessionToken({ tenant: `forge-stats-${run}`, email: 'dev@stats.test', roles: ['admin'] }))
      .token;
    const post = (path: string, body: unknown) => call(tenant, 'POST', path, body);
    await post('/forge/molds', {
      slug: 'ok',
      name: 'ok',
      actions: [{ name: 'a', type: 'script', config: { script: 'true' } }],
    });
    await post('/forge/molds', {
      slug: 'bad',
      name: 'bad',
      actions: [{ name: 'a', type: 'script', config: { script: 'exit 3' } }],
    });
    const ids = [];
    for (const moldSlug of ['ok', 'ok', 'bad'])
      ids.push((await post('/forge/runs', { mold_slug: moldSlug, parameters: {} })).body.id);
    for (const id of ids) {
      for (let i = 0; i < 100; i++) {
        const { body } = await call(tenant, 'GET', `/forge/runs/${id}`);
        if (['completed', 'failed'].includes(body.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const stats = (await call(tenant, 'GET', '/forge/stats')).body;
    expect(stats.total_runs).toBe(3);
    expect(stats.by_status).toEqual(expect.objectContaining({ completed: 2, failed: 1, running: 0 }));
    expect(stats.success_rate).toBeCloseTo(2 / 3);
    const ok = stats.by_mold.find((m: { mold_slug: string }) => m.mold_slug === 'ok');
    expect(ok).toEqual(expect.objectContaining({ runs: 2, completed: 2, failed: 0, success_rate: 1 }));
    expect(ok.mean_duration_seconds).toBeGreaterThan(0);
  }, 60_000);
});

describe('a workflow without its run', () => {
  const neverStep = (runId: string): RunStepSpec => ({
    position: 0,
    name: 'never',
    type: 'api-call',
    config: { url: `${target.url}/orphan-${runId}`, method: 'GET', timeout_seconds: 5, max_attempts: 1 },
    requiresApproval: false,
  });
  const startWorkflow = (runId: string) =>
    api.deps.temporal.workflow.start('forgeRun', {
      taskQueue: TASK_QUEUES.forge,
      workflowId: forgeWorkflowId(runId),
      args: [
        { tenantId: writerTenantId, runId, steps: [neverStep(runId)], parameters: {}, version: FORGE_RUN_VERSION },
      ],
    });

  test('fails at its first write and runs no action: the API commits every run before starting its workflow', async () => {
    const runId = randomUUID();
    const handle = await startWorkflow(runId);
    await expect(handle.result()).rejects.toThrow('Workflow execution failed');
    expect(target.requests.map((r) => r.path)).not.toContain(`/orphan-${runId}`);
  }, 60_000);

  test('a run the API ended because its start seemed to fail runs no action when its workflow starts after all: the first action finds it finished', async () => {
    const runId = await storeRunWithoutWorkflow([
      { position: 0, name: 'never', type: 'api-call', config: {}, requiresApproval: false },
    ]);
    await withTenant(api.deps.db, writerTenantId, (trx) => failUnstartedRun(trx, runId, 'could not start'));
    await (await startWorkflow(runId)).result();
    expect(target.requests.map((r) => r.path)).not.toContain(`/orphan-${runId}`);
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    expect(body).toEqual(expect.objectContaining({ status: 'failed', error: 'could not start' }));
    expect(body.steps.map((step: { status: string }) => step.status)).toEqual(['skipped']);
    expect(await logMessages(runId)).toEqual([]);
  }, 60_000);
});
