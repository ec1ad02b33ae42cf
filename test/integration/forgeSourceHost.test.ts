import { useForgeSuite } from '../support/forgeRuns';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { sessionToken } from '../support/harness';

// vcs-host-a-action runs against a local fake of the source host's API.

const forge = useForgeSuite();
const { call, createMold, startRun, waitForStatus } = forge;
let run: string;
let writer: string;
beforeAll(() => ({ run, writer } = forge.suite));

let sourceHost: FakeSourceHost;
beforeAll(async () => {
  sourceHost = await startFakeSourceHost();
});
afterAll(() => sourceHost.close());

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
