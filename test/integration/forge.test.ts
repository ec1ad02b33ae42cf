import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { apiRoutes } from '../../api/routes';
import { appendLogs, insertDecision, insertRun, listLogs, markRun, markStep } from '../../core/forge/runStore';
import { withTenant } from '../../db/tenancy';
import { forgeWorkflowId } from '../../core/forge/types';
import { TASK_QUEUES } from '../../core/taskQueues';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { closedPortUrl, startTarget, type Target } from '../support/httpTarget';
import {
  bearer,
  sessionToken,
  startApi,
  startWorkers,
  type TestApi,
  type TestWorkers,
  callApi,
} from '../support/harness';
import { processesCarrying, until } from '../support/processes';

// Molds and runs through HTTP, runs executed by a real forge worker on the real Temporal server.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let workers: TestWorkers;
let target: Target;
let sourceHost: FakeSourceHost;
let writer: string;
let writerTenantId: string;
let viewer: string;
/** A workflow started for a run that was never committed: see the last test. */
let orphan: WorkflowHandle;

// A secret-looking variable of this process, where the in-process workers run scripts: the
// scripts must not see it.
const FAKE_SECRET = `not-for-scripts-${run}`;

beforeAll(async () => {
  process.env.SHIPYARD_FAKE_SECRET = FAKE_SECRET;
  workers = await startWorkers(['forge']);
  api = await startApi({ routes: apiRoutes });
  // As if the API's transaction rolled back after starting the workflow: the run never exists.
  // Started first, so the wait for it to give up overlaps the other tests.
  const neverCommitted = randomUUID();
  orphan = await api.deps.temporal.workflow.start('forgeRun', {
    taskQueue: TASK_QUEUES.forge,
    workflowId: forgeWorkflowId(neverCommitted),
    args: [{ tenantId: randomUUID(), runId: neverCommitted, steps: [], parameters: {} }],
  });
  target = await startTarget();
  sourceHost = await startFakeSourceHost();
  ({ token: writer, tenantId: writerTenantId } = await sessionToken({
    tenant: `forge-${run}`,
    email: 'dev@forge.test',
    roles: ['admin'],
  }));
  viewer = (await sessionToken({ tenant: `forge-${run}`, email: 'reader@forge.test', roles: ['viewer'] })).token;
}, 60_000);
afterAll(async () => {
  delete process.env.SHIPYARD_FAKE_SECRET;
  // Should it still be retrying (a failed test), it would keep the worker from shutting down.
  await orphan.terminate().catch(() => undefined);
  await api.close();
  await workers.stop();
  await target.close();
  await sourceHost.close();
  // The worker finishes the orphan's local activity in flight before it stops (a run with -t).
}, 30_000);

const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

const slug = (name: string) => `${name}-${randomUUID().slice(0, 6)}`;

async function createMold(mold: Record<string, unknown>) {
  const res = await call(writer, 'POST', '/forge/molds', { slug: slug('mold'), name: 'A mold', ...mold });
  expect(res.status).toBe(201);
  return res.body;
}

async function startRun(moldSlug: string, parameters: Record<string, unknown> = {}) {
  const res = await call(writer, 'POST', '/forge/runs', { mold_slug: moldSlug, parameters });
  expect(res.status).toBe(201);
  return res.body;
}

/** A run stored directly, with no workflow behind it, so nothing but the test writes to it. */
async function storeRunWithoutWorkflow(steps: Parameters<typeof insertRun>[1]['steps'] = []): Promise<string> {
  const mold = await createMold({});
  const runId = randomUUID();
  await withTenant(api.deps.db, writerTenantId, (trx) =>
    insertRun(trx, {
      id: runId,
      tenantId: writerTenantId,
      moldId: mold.id,
      moldSlug: mold.slug,
      moldVersion: 1,
      moldSnapshot: {},
      parameters: {},
      startedBy: 'dev@forge.test',
      workflowId: forgeWorkflowId(runId),
      steps,
    }),
  );
  return runId;
}

const logMessages = async (runId: string): Promise<string[]> =>
  (await call(writer, 'GET', `/forge/runs/${runId}/logs`)).body.lines.map((l: { message: string }) => l.message);

/** Polls the run's log until a line matches, while the run goes on; returns the match. */
const waitForLog = (runId: string, pattern: RegExp, seconds = 30): Promise<RegExpExecArray> =>
  until(`a log line of run ${runId} matching ${pattern}`, seconds, async () => {
    for (const message of await logMessages(runId)) {
      const match = pattern.exec(message);
      if (match) return match;
    }
    return undefined;
  });

/** Waits until the run waits for approval of the step at `position`. */
const waitForGate = (runId: string, position: number) =>
  until(`run ${runId} waiting at step ${position}`, 30, async () => {
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    return body.status === 'awaiting_approval' && body.steps[position].status === 'awaiting_approval'
      ? true
      : undefined;
  });

/** Waits until the run reads one of `statuses`; returns the run. */
const waitForStatus = (runId: string, statuses: string[], seconds = 30) =>
  until(`run ${runId} in ${statuses.join('/')}`, seconds, async () => {
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    return statuses.includes(body.status) ? body : undefined;
  });

describe('molds', () => {
  test('a slug is unique per tenant; the same slug in another tenant is fine', async () => {
    const mold = await createMold({});
    expect((await call(writer, 'POST', '/forge/molds', { slug: mold.slug, name: 'again' })).status).toBe(409);
    const other = (await sessionToken({ tenant: `forge-other-${run}`, email: 'dev@other.test', roles: ['admin'] }))
      .token;
    expect((await call(other, 'POST', '/forge/molds', { slug: mold.slug, name: 'theirs' })).status).toBe(201);
  });

  test('parameter and action definitions are validated with per-field details', async () => {
    const badParameters = [
      { name: 'env', type: 'select' },
      { name: 'count', type: 'number', default: 'three' },
      { name: 'count', type: 'string' },
    ];
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: badParameters,
      actions: [{ name: 'call', type: 'api-call', config: { method: 'FETCH' } }],
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.actions.0.config.url']));
    const rules = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: badParameters,
    });
    expect(rules.status).toBe(400);
    expect(rules.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'body.parameters.0.options', message: 'a select parameter needs options' },
        { field: 'body.parameters.1.default', message: 'default must be a number' },
        { field: 'body.parameters', message: 'parameter "count" is defined more than once' },
      ]),
    );
  });

  test('config is required for api-call, script and vcs-host-a-action (not approval); an api-call URL must be absolute http(s)', async () => {
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      actions: [
        { name: 'call', type: 'api-call' },
        { name: 'build', type: 'script' },
        { name: 'host', type: 'vcs-host-a-action' },
        { name: 'gate', type: 'approval' },
      ],
    });
    expect(res.status).toBe(400);
    const missing = res.body.error.details.filter(
      (d: { message: string }) => d.message === "must have required property 'config'",
    );
    expect(missing.map((d: { field: string }) => d.field)).toEqual([
      'body.actions.0.config',
      'body.actions.1.config',
      'body.actions.2.config',
    ]);
    const relative = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      actions: [{ name: 'call', type: 'api-call', config: { url: '/hooks' } }],
    });
    expect(relative.status).toBe(400);
    expect(relative.body.error.details).toEqual([
      {
        field: 'body.actions.0.config.url',
        message: 'must be an absolute http(s) URL or begin with a ${{ parameters.name }} reference',
      },
    ]);
  });

  test('a reference to a parameter the mold does not define is a 400 on create and on an update that drops it', async () => {
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: [{ name: 'service', type: 'string' }],
      actions: [{ name: 'host', type: 'vcs-host-a-action', config: { path: '/repos/${{ parameters.sevice }}' } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: 'body.actions.0.config.path', message: 'refers to "sevice", which is not a parameter of this mold' },
    ]);
    const mold = await createMold({
      parameters: [{ name: 'service', type: 'string' }],
      actions: [{ name: 'call', type: 'api-call', config: { url: `${target.url}/\${{ parameters.service }}` } }],
    });
    const update = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { parameters: [] });
    expect(update.status).toBe(400);
    expect(update.body.error.details).toEqual([
      { field: 'body.actions.0.config.url', message: 'refers to "service", which is not a parameter of this mold' },
    ]);
  });

  test('a ${{ }} reference inside script text is a 400 on create and on update, pointing to $PARAM_<NAME>; the variable itself is fine', async () => {
    const parameters = [{ name: 'service', type: 'string' }];
    const detail = {
      field: 'body.actions.0.config.script',
      message:
        'parameters reach scripts as $PARAM_<NAME> environment variables, not through ${{ }} references: write "$PARAM_SERVICE"',
    };
    const templated = [
      { name: 'build', type: 'script', config: { script: 'make deploy SERVICE=${{ parameters.service }}' } },
    ];
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters,
      actions: templated,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([detail]);
    const mold = await createMold({
      parameters,
      actions: [{ name: 'build', type: 'script', config: { script: 'make deploy SERVICE="$PARAM_SERVICE"' } }],
    });
    const update = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { actions: templated });
    expect(update.status).toBe(400);
    expect(update.body.error.details).toEqual([detail]);
    expect((await call(writer, 'GET', `/forge/molds/${mold.slug}`)).body.version).toBe(1);
  });

  test('list filters published=true/false and visibility=all; an unpublish hides the mold from readers again', async () => {
    const category = `pub-${run}`;
    const draft = await createMold({ category });
    const live = await createMold({ category });
    expect((await call(writer, 'POST', `/forge/molds/${live.slug}/publish`)).status).toBe(200);
    const slugs = async (token: string, filter: string) =>
      (await call(token, 'GET', `/forge/molds?category=${category}&${filter}`)).body.molds.map(
        (m: { slug: string }) => m.slug,
      );
    expect(await slugs(writer, 'published=true')).toEqual([live.slug]);
    expect(await slugs(writer, 'published=false')).toEqual([draft.slug]);
    expect(await slugs(writer, 'visibility=all')).toEqual([draft.slug, live.slug].sort());
    expect(await slugs(viewer, 'visibility=all')).toEqual([live.slug]);
    expect(await slugs(viewer, 'published=false')).toEqual([]);

    const unpublished = await call(writer, 'POST', `/forge/molds/${live.slug}/unpublish`);
    expect(unpublished.body).toEqual(expect.objectContaining({ published: false }));
    expect(await slugs(viewer, 'visibility=all')).toEqual([]);
    expect((await call(viewer, 'GET', `/forge/molds/${live.slug}`)).status).toBe(404);
  });

  test('readers see published molds only; writers see drafts; publishing shows a mold to readers', async () => {
    const mold = await createMold({ category: `cat-${run}` });
    expect((await call(viewer, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
    expect((await call(writer, 'GET', `/forge/molds?category=cat-${run}`)).body.molds).toHaveLength(1);
    expect((await call(viewer, 'GET', `/forge/molds?category=cat-${run}`)).body.molds).toHaveLength(0);
    const published = await call(writer, 'POST', `/forge/molds/${mold.slug}/publish`);
    expect(published.body).toEqual(expect.objectContaining({ published: true, version: 1 }));
    const list = await call(viewer, 'GET', `/forge/molds?category=cat-${run}`);
    expect(list.body.molds.map((m: { slug: string }) => m.slug)).toEqual([mold.slug]);
    expect(list.body.pagination).toEqual({ total_count: 1, next_cursor: '', has_more: false });
    expect(
      (await call(writer, 'GET', `/forge/molds?category=cat-${run}&visibility=unpublished`)).body.molds,
    ).toHaveLength(0);
    expect((await call(viewer, 'POST', `/forge/molds/${mold.slug}/unpublish`)).status).toBe(403);
  });

  test('an update bumps the version; delete needs forge:admin and removes the mold', async () => {
    const mold = await createMold({});
    const updated = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { description: 'changed' });
    expect(updated.body).toEqual(expect.objectContaining({ description: 'changed', version: 2 }));
    const editor = (await sessionToken({ tenant: `forge-${run}`, email: 'editor@forge.test', roles: ['editor'] }))
      .token;
    expect((await call(editor, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(403);
    expect((await call(writer, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(204);
    expect((await call(writer, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
  });
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
    const started = Date.now();
    const done = await waitForStatus((await startRun(mold.slug)).id, ['completed', 'failed']);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(done.status).toBe('failed');
    expect(done.steps[0]).toEqual(
      expect.objectContaining({ status: 'completed', output: { exit_code: 0, truncated: true } }),
    );
    expect(done.steps[1]).toEqual(
      expect.objectContaining({ status: 'failed', error: 'script exceeded its time limit (1 s)' }),
    );
    const messages = await logMessages(done.id);
    expect(messages).toContain('chatty: output truncated at 1024 bytes');
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

  test('approve by signal resumes a waiting run; a run keeps the mold version it started with', async () => {
    const mold = await createMold({
      actions: [
        { name: 'gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo original' } },
      ],
    });
    const late = await startRun(mold.slug);
    await waitForStatus(late.id, ['awaiting_approval']);
    await call(writer, 'PUT', `/forge/molds/${mold.slug}`, {
      actions: [
        { name: 'gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo changed' } },
      ],
    });
    const approved = await call(writer, 'POST', `/forge/runs/${late.id}/approve`, { comment: 'ship it' });
    expect(approved.status).toBe(200);
    const done = await waitForStatus(late.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.mold_version).toBe(1);
    expect(done.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', actor: 'dev@forge.test', comment: 'ship it' }),
    ]);
    const messages = (await call(writer, 'GET', `/forge/runs/${late.id}/logs`)).body.lines.map(
      (l: { message: string }) => l.message,
    );
    expect(messages).toContain('original');
    expect(messages).toContain('approved by dev@forge.test: ship it');
    const again = await call(writer, 'POST', `/forge/runs/${late.id}/approve`);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('Cannot approve a run that is completed');
  }, 60_000);

  test('reject by signal ends a waiting run as failed (rejected); approve is then refused', async () => {
    const mold = await createMold({
      requires_approval: true,
      actions: [{ name: 'say', type: 'script', config: { script: 'echo hi' } }],
    });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['awaiting_approval']);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`, { unknown: 1 })).status).toBe(400);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/reject`, { comment: 'not today' })).status).toBe(200);
    const done = await waitForStatus(started.id, ['failed', 'completed']);
    expect(done).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected by dev@forge.test' }));
    expect(done.steps[0]).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected' }));
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(409);
  }, 60_000);

  test('cancel by signal kills a running script (its processes on the host are gone within seconds) and ends the run cancelled, the comment in the log', async () => {
    const mold = await createMold({
      parameters: [{ name: 'marker', type: 'string', required: true }],
      actions: [
        { name: 'long', type: 'script', config: { script: 'sleep 30 & echo started; sleep 30; echo finished' } },
      ],
    });
    const token = randomUUID();
    const marker = `PARAM_MARKER=${token}`;
    const started = await startRun(mold.slug, { marker: token });
    // Streamed while the script runs.
    await waitForLog(started.id, /^started$/);
    // timeout, bwrap (prlimit became it) and its pid 1 inside, the shell and the sleep it started.
    expect(processesCarrying(marker).length).toBeGreaterThanOrEqual(5);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`, { comment: 'wrong branch' })).status).toBe(
      200,
    );
    await until(`every process of the script gone`, 5, async () =>
      processesCarrying(marker).length === 0 ? true : undefined,
    );
    const done = await waitForStatus(started.id, ['cancelled', 'failed', 'completed'], 20);
    expect(done.status).toBe('cancelled');
    expect(done.steps[0].status).toBe('cancelled');
    const messages = await logMessages(started.id);
    expect(messages).toContain('cancelled by dev@forge.test: wrong branch');
    expect(messages).not.toContain('finished');
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(409);
  }, 60_000);

  test('cancel also ends a run waiting for approval', async () => {
    const mold = await createMold({ actions: [{ name: 'gate', type: 'approval' }] });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['awaiting_approval']);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(200);
    expect((await waitForStatus(started.id, ['cancelled'])).steps[0].status).toBe('cancelled');
  }, 60_000);

  const twoGates = () =>
    createMold({
      actions: [
        { name: 'first-gate', type: 'approval' },
        { name: 'second-gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo done' } },
      ],
    });

  test('two concurrent approves of the waiting step: exactly one 200 and one 409 naming the status; the next step takes its own approve', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    const replies = await Promise.all([1, 2].map(() => call(writer, 'POST', `/forge/runs/${started.id}/approve`)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = replies.find((r) => r.status === 409)!.body.error;
    expect(refused.message).toMatch(/^Cannot approve a run that is (awaiting_approval|running)/);
    expect(refused.details).toEqual([
      { field: 'status', message: expect.stringMatching(/^(awaiting_approval|running)$/) },
    ]);

    await waitForGate(started.id, 1);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
    const done = await waitForStatus(started.id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    expect(
      done.decisions.map((d: { decision: string; step_position: number }) => [d.decision, d.step_position]),
    ).toEqual([
      ['approve', 0],
      ['approve', 1],
    ]);
  }, 60_000);

  test('approve and reject at once: one 200, one 409, and the run ends as the accepted decision says', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    const [approve, reject] = await Promise.all(
      ['approve', 'reject'].map((d) => call(writer, 'POST', `/forge/runs/${started.id}/${d}`)),
    );
    expect([approve.status, reject.status].sort()).toEqual([200, 409]);
    if (approve.status === 200) {
      await waitForGate(started.id, 1);
      expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
    }
    const done = await waitForStatus(started.id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe(approve.status === 200 ? 'completed' : 'failed');
    expect(done.decisions[0].decision).toBe(approve.status === 200 ? 'approve' : 'reject');
  }, 60_000);

  test('reject of a completed run is a 409 naming its status', async () => {
    const mold = await createMold({ actions: [{ name: 'say', type: 'script', config: { script: 'echo hi' } }] });
    const done = await waitForStatus((await startRun(mold.slug)).id, ['completed', 'failed']);
    const res = await call(writer, 'POST', `/forge/runs/${done.id}/reject`);
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual(
      expect.objectContaining({
        code: 'CONFLICT',
        message: 'Cannot reject a run that is completed',
        details: [{ field: 'status', message: 'completed' }],
      }),
    );
  }, 60_000);

  test('starts and decisions are audited in /admin/activity, a refused decision as a failure with its reason', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    await call(writer, 'POST', `/forge/runs/${started.id}/approve`, { comment: 'fine' });
    await call(writer, 'POST', `/forge/runs/${started.id}/cancel`);
    await waitForStatus(started.id, ['cancelled']);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(409);
    const { items } = (await call(writer, 'GET', '/admin/activity?limit=100')).body;
    const ofRun = items.filter(
      (i: { targetType: string; targetId: string }) => i.targetType === 'run' && i.targetId === started.id,
    );
    expect(
      ofRun.map((i: { eventType: string; actor: string; status: string; errorMessage: string | null }) => [
        i.eventType,
        i.actor,
        i.status,
        i.errorMessage,
      ]),
    ).toEqual([
      ['forge.run.approve', 'dev@forge.test', 'failure', 'Cannot approve a run that is cancelled'],
      ['forge.run.cancel', 'dev@forge.test', 'success', null],
      ['forge.run.approve', 'dev@forge.test', 'success', null],
      ['forge.run.started', 'dev@forge.test', 'success', null],
    ]);
  }, 60_000);

  test('once a cancel is accepted the run cannot end completed or failed: the final write answers cancel-accepted', async () => {
    const runId = await storeRunWithoutWorkflow();
    await withTenant(api.deps.db, writerTenantId, (trx) =>
      insertDecision(trx, { tenantId: writerTenantId, runId, kind: 'cancel', position: null, actor: 'dev@forge.test' }),
    );
    const outcome = (status: 'completed' | 'failed' | 'running') =>
      withTenant(api.deps.db, writerTenantId, (trx) => markRun(trx, runId, status));
    expect(await outcome('running')).toBe('written');
    expect(await outcome('completed')).toBe('cancel-accepted');
    expect(await outcome('failed')).toBe('cancel-accepted');
    expect((await call(writer, 'GET', `/forge/runs/${runId}`)).body.status).toBe('running');
    expect(
      await withTenant(api.deps.db, writerTenantId, (trx) =>
        insertDecision(trx, { tenantId: writerTenantId, runId, kind: 'cancel', position: null, actor: 'again' }),
      ),
    ).toBe(false);
  });

  test('bookkeeping repeated by a retried workflow task changes nothing: a finished step keeps its status, a workflow line is logged once', async () => {
    const runId = await storeRunWithoutWorkflow([
      { position: 0, name: 'only', type: 'api-call', config: {}, requiresApproval: false },
    ]);
    const inTenant = <T>(work: (trx: Parameters<typeof appendLogs>[0]) => Promise<T>) =>
      withTenant(api.deps.db, writerTenantId, work);
    await inTenant(async (trx) => {
      await markStep(trx, runId, 0, 'running');
      await markStep(trx, runId, 0, 'cancelled');
      await markStep(trx, runId, 0, 'completed', { output: { late: true } });
      for (let i = 0; i < 2; i++)
        await appendLogs(trx, writerTenantId, runId, [{ level: 'warn', message: 'cancelled by dev@forge.test' }], {
          once: true,
        });
      // Script output is not deduplicated: a script may print the same line twice.
      for (let i = 0; i < 2; i++) await appendLogs(trx, writerTenantId, runId, [{ message: 'same line' }]);
    });
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    expect(body.steps[0]).toEqual(expect.objectContaining({ status: 'cancelled', output: null }));
    const messages = (await inTenant((trx) => listLogs(trx, runId))).map((line) => line.message);
    expect(messages).toEqual(['cancelled by dev@forge.test', 'same line', 'same line']);
  });

  test('log appends to one run take turns, so ids commit in order and a reader following ids never skips a line', async () => {
    const { id: runId } = await startRun((await createMold({ actions: [{ name: 'gate', type: 'approval' }] })).slug);
    await waitForGate(runId, 0);
    const inTenant = <T>(work: (trx: Parameters<typeof appendLogs>[0]) => Promise<T>) =>
      withTenant(api.deps.db, writerTenantId, work);
    const lastId = Math.max(0, ...(await inTenant((trx) => listLogs(trx, runId))).map((line) => line.id));
    let releaseFirst = () => {};
    let firstAppended = false;
    const first = inTenant(async (trx) => {
      await appendLogs(trx, writerTenantId, runId, [{ message: 'first' }]);
      firstAppended = true;
      await new Promise<void>((resolve) => (releaseFirst = resolve));
    });
    let secondDone = false;
    let second: Promise<unknown>;
    try {
      await until('the first append under way', 5, async () => firstAppended || undefined);
      second = inTenant((trx) => appendLogs(trx, writerTenantId, runId, [{ message: 'second' }])).then(
        () => (secondDone = true),
      );
      // While the first append's transaction is open, a reader sees neither line, and the second
      // append waits rather than committing a line the reader would see first.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(secondDone).toBe(false);
      expect(await inTenant((trx) => listLogs(trx, runId, lastId))).toEqual([]);
    } finally {
      releaseFirst(); // an open transaction would keep the pool from closing
    }
    await Promise.all([first, second]);
    expect((await inTenant((trx) => listLogs(trx, runId, lastId))).map((line) => line.message)).toEqual([
      'first',
      'second',
    ]);
    await call(writer, 'POST', `/forge/runs/${runId}/cancel`);
  }, 60_000);

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

describe('source host actions (vcs-host-a-action, against a local fake of its API)', () => {
  let integrationId: string;
  beforeAll(async () => {
    sourceHost.repositories.add('acme/payments');
    const res = await call(writer, 'POST', '/integrations', {
      name: 'source host',
      type: 'vcs-host-a',
      config: { base_url: sourceHost.url, token: sourceHost.token },
    });
    expect(res.status).toBe(201);
    integrationId = res.body.id;
  });

  const issueMold = () =>
    createMold({
      parameters: [
        { name: 'repo', type: 'string', required: true },
        { name: 'title', type: 'string', required: true },
      ],
      actions: [
        {
          name: 'open-issue',
          type: 'vcs-host-a-action',
          config: {
            path: '/repos/acme/${{ parameters.repo }}/issues',
            body: { title: '${{ parameters.title }}', labels: ['forge'] },
          },
        },
        {
          name: 'dispatch',
          type: 'vcs-host-a-action',
          config: {
            path: '/repos/acme/${{ parameters.repo }}/dispatches',
            body: { event_type: 'deploy', client_payload: { title: '${{ parameters.title }}' } },
          },
        },
      ],
    });

  test("calls the host's API with the tenant's integration: templated path and body, bearer token, per-step output", async () => {
    const mold = await issueMold();
    const started = await startRun(mold.slug, { repo: 'payments', title: `Rotate keys ${run}` });
    const done = await waitForStatus(started.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(sourceHost.issues).toContainEqual({
      repository: 'acme/payments',
      number: expect.any(Number),
      title: `Rotate keys ${run}`,
      body: undefined,
      labels: ['forge'],
    });
    expect(sourceHost.dispatches).toContainEqual({
      repository: 'acme/payments',
      event_type: 'deploy',
      client_payload: { title: `Rotate keys ${run}` },
    });
    expect(done.steps.map((s: { status: string; output: { status: number } }) => [s.status, s.output.status])).toEqual([
      ['completed', 201],
      ['completed', 204],
    ]);
    // The token is used on the wire but never stored with the run.
    expect(JSON.stringify(done)).not.toContain(sourceHost.token);
  }, 60_000);

  test('a host outage (502) is retried; a parameter cannot climb out of its path segment (404 fails the step at once)', async () => {
    const mold = await issueMold();
    sourceHost.outages = 1;
    const retried = await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'after outage' })).id, [
      'completed',
      'failed',
    ]);
    expect(retried.status).toBe('completed');
    expect(
      sourceHost.requests.filter(
        (r) => r.path === '/repos/acme/payments/issues' && (r.body as { title?: string }).title === 'after outage',
      ),
    ).toHaveLength(2);

    const before = sourceHost.requests.length;
    const escaped = await waitForStatus((await startRun(mold.slug, { repo: '../payments', title: 'escape' })).id, [
      'completed',
      'failed',
    ]);
    expect(escaped.status).toBe('failed');
    expect(escaped.steps[0].error).toMatch(/answered 404/);
    expect(sourceHost.requests.slice(before).map((r) => r.path)).toEqual(['/repos/acme/..%2Fpayments/issues']);
  }, 60_000);

  test("an update that leaves the token out keeps it; a wrong token fails the step with the host's 401", async () => {
    const mold = await issueMold();
    const kept = await call(writer, 'PUT', `/integrations/${integrationId}`, {
      config: { base_url: sourceHost.url, organization: 'acme' },
    });
    expect(kept.body).toEqual(
      expect.objectContaining({ config: { base_url: sourceHost.url, organization: 'acme' }, secrets: ['token'] }),
    );
    expect(
      (
        await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'still authorised' })).id, [
          'completed',
          'failed',
        ])
      ).status,
    ).toBe('completed');

    await call(writer, 'PUT', `/integrations/${integrationId}`, {
      config: { base_url: sourceHost.url, token: 'wrong' },
    });
    try {
      const denied = await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'denied' })).id, [
        'completed',
        'failed',
      ]);
      expect(denied.status).toBe('failed');
      expect(denied.steps[0].error).toMatch(/answered 401: .*Bad credentials/);
    } finally {
      await call(writer, 'PUT', `/integrations/${integrationId}`, {
        config: { base_url: sourceHost.url, token: sourceHost.token },
      });
    }
  }, 60_000);

  test('without an active integration the step fails with a clear reason', async () => {
    const tenant = (await sessionToken({ tenant: `forge-novcs-${run}`, email: 'dev@novcs.test', roles: ['admin'] }))
      .token;
    await call(tenant, 'POST', '/forge/molds', {
      slug: 'ping',
      name: 'ping',
      actions: [{ name: 'ping', type: 'vcs-host-a-action', config: { method: 'GET', path: '/repos/acme/payments' } }],
    });
    const runId = (await call(tenant, 'POST', '/forge/runs', { mold_slug: 'ping', parameters: {} })).body.id;
    let done;
    for (let i = 0; i < 100 && !['completed', 'failed'].includes(done?.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      done = (await call(tenant, 'GET', `/forge/runs/${runId}`)).body;
    }
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toMatch(/no active vcs-host-a integration/);
  }, 60_000);
});

describe('logs and stats', () => {
  test('follow=true streams script output live as server-sent events (a line arrives while the script still runs) and ends with the run', async () => {
    const mold = await createMold({
      actions: [{ name: 'slow', type: 'script', config: { script: 'echo one; sleep 2; echo two' } }],
    });
    const started = await startRun(mold.slug);
    const res = await fetch(`${api.url}/api/v1/forge/runs/${started.id}/logs?follow=true`, { headers: bearer(writer) });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    // Each event with the time it arrived; the server closes the stream when the run ends.
    const events: { event: string; data: { message?: string; status?: string }; at: number }[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop()!;
      for (const block of blocks) {
        events.push({
          event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
          data: JSON.parse(/^data: (.*)$/m.exec(block)![1]),
          at: Date.now(),
        });
      }
    }
    const line = (message: string) => events.find((e) => e.event === 'message' && e.data.message === message)!;
    expect(line('two').at - line('one').at).toBeGreaterThan(1000);
    expect(events.at(-1)).toEqual(expect.objectContaining({ event: 'end', data: { status: 'completed' } }));
  }, 60_000);

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

describe('a run that never commits', () => {
  test('its workflow gives up within about a minute instead of retrying the first write forever', async () => {
    // Started in beforeAll, so most of the wait has passed by now.
    // The test's own timeout is the upper bound; the lower one shows it did wait for a commit.
    await expect(orphan.result()).rejects.toThrow('Workflow execution failed');
    const { status, closeTime, startTime } = await orphan.describe();
    expect(status.name).toBe('FAILED');
    expect(closeTime!.getTime() - startTime.getTime()).toBeGreaterThanOrEqual(50_000);
  }, 90_000);
});
