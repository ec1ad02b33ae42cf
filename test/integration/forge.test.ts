import { randomUUID } from 'node:crypto';
import { apiRoutes } from '../../api/routes';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { startTarget, type Target } from '../support/httpTarget';
import { bearer, sessionToken, startApi, startWorkers, type TestApi, type TestWorkers, callApi } from '../support/harness';

// Molds and runs through HTTP, runs executed by a real forge worker on the real Temporal server.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let workers: TestWorkers;
let target: Target;
let sourceHost: FakeSourceHost;
let writer: string;
let viewer: string;
beforeAll(async () => {
  workers = await startWorkers(['forge']);
  api = await startApi({ routes: apiRoutes });
  target = await startTarget();
  sourceHost = await startFakeSourceHost();
  writer = (await sessionToken({ tenant: `forge-${run}`, email: 'dev@forge.test', roles: ['admin'] })).token;
  viewer = (await sessionToken({ tenant: `forge-${run}`, email: 'reader@forge.test', roles: ['viewer'] })).token;
}, 60_000);
afterAll(async () => {
  await api.close();
  await workers.stop();
  await target.close();
  await sourceHost.close();
});

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

async function waitForStatus(runId: string, statuses: string[], seconds = 30) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    if (statuses.includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`run ${runId} stayed ${body.status}, expected ${statuses.join('/')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('molds', () => {
  test('a slug is unique per tenant; the same slug in another tenant is fine', async () => {
    const mold = await createMold({});
    expect((await call(writer, 'POST', '/forge/molds', { slug: mold.slug, name: 'again' })).status).toBe(409);
    const other = (await sessionToken({ tenant: `forge-other-${run}`, email: 'dev@other.test', roles: ['admin'] })).token;
    expect((await call(other, 'POST', '/forge/molds', { slug: mold.slug, name: 'theirs' })).status).toBe(201);
  });

  test('parameter and action definitions are validated with per-field details', async () => {
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: [
        { name: 'env', type: 'select' },
        { name: 'count', type: 'number', default: 'three' },
        { name: 'count', type: 'string' },
      ],
      actions: [{ name: 'call', type: 'api-call', config: { method: 'FETCH' } }],
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.actions.0.config.url']));
    const rules = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: [
        { name: 'env', type: 'select' },
        { name: 'count', type: 'number', default: 'three' },
        { name: 'count', type: 'string' },
      ],
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
    expect((await call(writer, 'GET', `/forge/molds?category=cat-${run}&visibility=unpublished`)).body.molds).toHaveLength(0);
    expect((await call(viewer, 'POST', `/forge/molds/${mold.slug}/unpublish`)).status).toBe(403);
  });

  test('an update bumps the version; delete needs forge:admin and removes the mold', async () => {
    const mold = await createMold({});
    const updated = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { description: 'changed' });
    expect(updated.body).toEqual(expect.objectContaining({ description: 'changed', version: 2 }));
    const editor = (await sessionToken({ tenant: `forge-${run}`, email: 'editor@forge.test', roles: ['editor'] })).token;
    expect((await call(editor, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(403);
    expect((await call(writer, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(204);
    expect((await call(writer, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
  });
});

describe('runs', () => {
  test('a three-action mold runs to completed, with templated parameters, per-step statuses and logs', async () => {
    target.status = 200;
    const mold = await createMold({
      parameters: [
        { name: 'service', type: 'string', required: true },
        { name: 'replicas', type: 'number', default: 2 },
      ],
      actions: [
        { name: 'announce', type: 'api-call', config: { method: 'POST', url: `${target.url}/hooks/\${{ parameters.service }}`, body: { replicas: '${{ parameters.replicas }}' } } },
        { name: 'build', type: 'script', config: { script: 'echo "building ${{ parameters.service }} x$PARAM_REPLICAS"; echo "secret=${DATABASE_URL:-none}"' } },
        { name: 'check', type: 'api-call', config: { url: `${target.url}/health` } },
      ],
    });
    const started = await startRun(mold.slug, { service: 'payments' });
    expect(started.status).toBe('pending');
    expect(started.temporal_ui_url).toContain(`/workflows/forge-run-${started.id}`);
    const done = await waitForStatus(started.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['announce', 'completed'],
      ['build', 'completed'],
      ['check', 'completed'],
    ]);
    expect(done.parameters).toEqual({ service: 'payments', replicas: 2 });
    expect(target.requests).toEqual(
      expect.arrayContaining([{ method: 'POST', path: '/hooks/payments', body: JSON.stringify({ replicas: 2 }) }]),
    );
    const { lines } = (await call(writer, 'GET', `/forge/runs/${started.id}/logs`)).body;
    const messages = lines.map((l: { message: string }) => l.message);
    expect(messages).toContain('building payments x2');
    // The script's environment carries none of the worker's secrets.
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

  test('parameters are checked against the mold: unknown, missing, wrong type and bad option are 400s per field', async () => {
    const mold = await createMold({
      parameters: [
        { name: 'service', type: 'string', required: true },
        { name: 'env', type: 'select', options: ['dev', 'prod'] },
        { name: 'count', type: 'number' },
      ],
    });
    const res = await call(writer, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: { env: 'staging', count: 'x', extra: 1 } });
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
    await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { actions: [{ name: 'gate', type: 'approval' }, { name: 'say', type: 'script', config: { script: 'echo changed' } }] });
    const approved = await call(writer, 'POST', `/forge/runs/${late.id}/approve`, { comment: 'ship it' });
    expect(approved.status).toBe(200);
    const done = await waitForStatus(late.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.mold_version).toBe(1);
    expect(done.decisions).toEqual([expect.objectContaining({ decision: 'approve', actor: 'dev@forge.test', comment: 'ship it' })]);
    const messages = (await call(writer, 'GET', `/forge/runs/${late.id}/logs`)).body.lines.map((l: { message: string }) => l.message);
    expect(messages).toContain('original');
    expect(messages).toContain('approved by dev@forge.test: ship it');
    const again = await call(writer, 'POST', `/forge/runs/${late.id}/approve`);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('Cannot approve a run that is completed');
  }, 60_000);

  test('reject by signal ends a waiting run as failed (rejected); approve is then refused', async () => {
    const mold = await createMold({ requires_approval: true, actions: [{ name: 'say', type: 'script', config: { script: 'echo hi' } }] });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['awaiting_approval']);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`, { unknown: 1 })).status).toBe(400);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/reject`, { comment: 'not today' })).status).toBe(200);
    const done = await waitForStatus(started.id, ['failed', 'completed']);
    expect(done).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected by dev@forge.test' }));
    expect(done.steps[0]).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected' }));
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(409);
  }, 60_000);

  test('cancel by signal stops a running script at once and ends the run cancelled', async () => {
    const mold = await createMold({ actions: [{ name: 'long', type: 'script', config: { script: 'echo started; sleep 30; echo finished' } }] });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['running']);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = Date.now();
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`, { comment: 'wrong branch' })).status).toBe(200);
    const done = await waitForStatus(started.id, ['cancelled', 'failed', 'completed'], 20);
    expect(Date.now() - before).toBeLessThan(15_000);
    expect(done.status).toBe('cancelled');
    expect(done.steps[0].status).toBe('cancelled');
    const messages = (await call(writer, 'GET', `/forge/runs/${started.id}/logs`)).body.lines.map((l: { message: string }) => l.message);
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

  test("runs and molds of one tenant are invisible to another: 404s and empty lists", async () => {
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
    const res = await call(writer, 'POST', '/integrations', { name: 'source host', type: 'vcs-host-a', config: { base_url: sourceHost.url, token: sourceHost.token } });
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
        { name: 'open-issue', type: 'vcs-host-a-action', config: { path: '/repos/acme/${{ parameters.repo }}/issues', body: { title: '${{ parameters.title }}', labels: ['forge'] } } },
        { name: 'dispatch', type: 'vcs-host-a-action', config: { path: '/repos/acme/${{ parameters.repo }}/dispatches', body: { event_type: 'deploy', client_payload: { title: '${{ parameters.title }}' } } } },
      ],
    });

  test("calls the host's API with the tenant's integration: templated path and body, bearer token, per-step output", async () => {
    const mold = await issueMold();
    const started = await startRun(mold.slug, { repo: 'payments', title: `Rotate keys ${run}` });
    const done = await waitForStatus(started.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(sourceHost.issues).toContainEqual({ repository: 'acme/payments', number: expect.any(Number), title: `Rotate keys ${run}`, body: undefined, labels: ['forge'] });
    expect(sourceHost.dispatches).toContainEqual({ repository: 'acme/payments', event_type: 'deploy', client_payload: { title: `Rotate keys ${run}` } });
    expect(done.steps.map((s: { status: string; output: { status: number } }) => [s.status, s.output.status])).toEqual([['completed', 201], ['completed', 204]]);
    // The token is used on the wire but never stored with the run.
    expect(JSON.stringify(done)).not.toContain(sourceHost.token);
  }, 60_000);

  test('a host outage (502) is retried; a parameter cannot climb out of its path segment (404 fails the step at once)', async () => {
    const mold = await issueMold();
    sourceHost.outages = 1;
    const retried = await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'after outage' })).id, ['completed', 'failed']);
    expect(retried.status).toBe('completed');
    expect(sourceHost.requests.filter((r) => r.path === '/repos/acme/payments/issues' && (r.body as { title?: string }).title === 'after outage')).toHaveLength(2);

    const before = sourceHost.requests.length;
    const escaped = await waitForStatus((await startRun(mold.slug, { repo: '../payments', title: 'escape' })).id, ['completed', 'failed']);
    expect(escaped.status).toBe('failed');
    expect(escaped.steps[0].error).toMatch(/answered 404/);
    expect(sourceHost.requests.slice(before).map((r) => r.path)).toEqual(['/repos/acme/..%2Fpayments/issues']);
  }, 60_000);

  test('an update that leaves the token out keeps it; a wrong token fails the step with the host\'s 401', async () => {
    const mold = await issueMold();
    const kept = await call(writer, 'PUT', `/integrations/${integrationId}`, { config: { base_url: sourceHost.url, organization: 'acme' } });
    expect(kept.body).toEqual(expect.objectContaining({ config: { base_url: sourceHost.url, organization: 'acme' }, secrets: ['token'] }));
    expect((await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'still authorised' })).id, ['completed', 'failed'])).status).toBe('completed');

    await call(writer, 'PUT', `/integrations/${integrationId}`, { config: { base_url: sourceHost.url, token: 'wrong' } });
    try {
      const denied = await waitForStatus((await startRun(mold.slug, { repo: 'payments', title: 'denied' })).id, ['completed', 'failed']);
      expect(denied.status).toBe('failed');
      expect(denied.steps[0].error).toMatch(/answered 401: .*Bad credentials/);
    } finally {
      await call(writer, 'PUT', `/integrations/${integrationId}`, { config: { base_url: sourceHost.url, token: sourceHost.token } });
    }
  }, 60_000);

  test('without an active integration the step fails with a clear reason', async () => {
    const tenant = (await sessionToken({ tenant: `forge-novcs-${run}`, email: 'dev@novcs.test', roles: ['admin'] })).token;
    await call(tenant, 'POST', '/forge/molds', { slug: 'ping', name: 'ping', actions: [{ name: 'ping', type: 'vcs-host-a-action', config: { method: 'GET', path: '/repos/acme/payments' } }] });
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
  test('follow=true streams the log as server-sent events, new lines included, and ends with the run', async () => {
    const mold = await createMold({ actions: [{ name: 'slow', type: 'script', config: { script: 'echo one; sleep 1; echo two' } }] });
    const started = await startRun(mold.slug);
    const res = await fetch(`${api.url}/api/v1/forge/runs/${started.id}/logs?follow=true`, { headers: bearer(writer) });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text(); // the server closes the stream when the run ends
    const events = text.trim().split('\n\n').map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
      data: JSON.parse(/^data: (.*)$/m.exec(block)![1]),
    }));
    const messages = events.filter((e) => e.event === 'message').map((e) => e.data.message);
    expect(messages).toEqual(expect.arrayContaining(['one', 'two']));
    expect(messages.indexOf('one')).toBeLessThan(messages.indexOf('two'));
    expect(events.at(-1)).toEqual({ event: 'end', data: { status: 'completed' } });
  }, 60_000);

  test('stats count runs by status and give success rate and mean duration per mold', async () => {
    const tenant = (await sessionToken({ tenant: `forge-stats-${run}`, email: 'dev@stats.test', roles: ['admin'] })).token;
    const post = (path: string, body: unknown) => call(tenant, 'POST', path, body);
    await post('/forge/molds', { slug: 'ok', name: 'ok', actions: [{ name: 'a', type: 'script', config: { script: 'true' } }] });
    await post('/forge/molds', { slug: 'bad', name: 'bad', actions: [{ name: 'a', type: 'script', config: { script: 'exit 3' } }] });
    const ids = [];
    for (const moldSlug of ['ok', 'ok', 'bad']) ids.push((await post('/forge/runs', { mold_slug: moldSlug, parameters: {} })).body.id);
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
