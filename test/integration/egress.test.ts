import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { apiRoutes } from '../../api/routes';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { forgeCaller } from '../support/forgeRuns';
import { sessionToken, startApi, startWorkers, type TestApi, type TestWorkers } from '../support/harness';
import { startTarget, type Target } from '../support/httpTarget';
import { launch, until } from '../support/processes';

// The egress guard through real forge runs: a real worker makes each outbound request, to local
// targets on 127.0.0.1 (refused, as in production) and on 127.0.0.77 (allowed by the suite's
// SHIPYARD_EGRESS_ALLOW). The client's finer cases are in test/unit/egressClient.test.ts.

let api: TestApi;
let workers: TestWorkers;
let forge: ReturnType<typeof forgeCaller>;
/** A mold of one api-call to `${{ parameters.base }}${{ parameters.path }}`. */
let callMold: string;
const targets: Target[] = [];
const hosts: FakeSourceHost[] = [];

const target = async (host?: string) => {
  const started = await startTarget(host);
  targets.push(started);
  return started;
};

beforeAll(async () => {
  workers = await startWorkers(['forge']);
  api = await startApi({ routes: apiRoutes });
  const { token } = await sessionToken({
    tenant: `egress-${randomUUID().slice(0, 8)}`,
    email: 'dev@egress.test',
    roles: ['admin'],
  });
  forge = forgeCaller(api, token);
  const mold = await forge.createMold({
    parameters: [
      { name: 'base', type: 'string', required: true },
      { name: 'path', type: 'string', default: '' },
    ],
    actions: [
      {
        name: 'call',
        type: 'api-call',
        config: { url: '${{ parameters.base }}${{ parameters.path }}', timeout_seconds: 30 },
      },
    ],
  });
  callMold = mold.slug;
}, 60_000);
afterAll(async () => {
  await api.close();
  await workers.stop();
  await Promise.all([...targets, ...hosts].map((t) => t.close()));
}, 30_000);

const runCall = async (base: string, path = '') => forge.finished((await forge.startRun(callMold, { base, path })).id);
const LOOPBACK_REFUSED = 'egress refused: 127.0.0.1 is a loopback address (allow it with SHIPYARD_EGRESS_ALLOW)';

test('an api-call to a target on 127.0.0.1 is refused at once (no retry) and the target gets nothing; the same call to a target on the allowed 127.0.0.77 is made', async () => {
  const [refused, allowed] = [await target('127.0.0.1'), await target()];
  const failed = await runCall(refused.url, '/ping');
  expect(failed.status).toBe('failed');
  expect(failed.steps[0].error).toBe(LOOPBACK_REFUSED);
  expect((await forge.logMessages(failed.id)).filter((m) => m.startsWith('call: starting'))).toEqual([
    'call: starting api-call (attempt 1)',
  ]);
  expect(refused.requests).toEqual([]);

  const done = await runCall(allowed.url, '/ping');
  expect(done.status).toBe('completed');
  expect(done.steps[0].output).toEqual({ status: 200, body: '{"ok":true}', truncated: false });
  expect(allowed.requests.map((r) => r.path)).toEqual(['/ping']);
}, 60_000);

test("a run parameter that is the whole URL cannot read Elasticsearch, the Temporal UI's API or a metadata service", async () => {
  const runs = await Promise.all(
    [
      'http://127.0.0.1:9200/_search',
      'http://localhost:9200/_all/_search',
      'http://127.0.0.1:8233/api/v1/namespaces',
      'http://169.254.169.254/latest/meta-data/',
    ].map((url) => runCall(url)),
  );
  expect(runs.map((run) => [run.status, run.steps[0].error, run.steps[0].output])).toEqual([
    ['failed', LOOPBACK_REFUSED, null],
    [
      'failed',
      'egress refused: localhost (127.0.0.1) is a loopback address (allow it with SHIPYARD_EGRESS_ALLOW)',
      null,
    ],
    ['failed', LOOPBACK_REFUSED, null],
    [
      'failed',
      'egress refused: 169.254.169.254 is a cloud metadata address (allow it with SHIPYARD_EGRESS_ALLOW)',
      null,
    ],
  ]);
}, 60_000);

test('a redirect from an allowed target to a refused address is refused and the refused one gets nothing; a redirect to an allowed target is followed', async () => {
  const [hop, refused, landing] = [await target(), await target('127.0.0.1'), await target()];
  hop.redirect = { status: 302, location: `${refused.url}/internal` };
  const failed = await runCall(hop.url, '/start');
  expect(failed.status).toBe('failed');
  expect(failed.steps[0].error).toBe(LOOPBACK_REFUSED);
  expect(hop.requests.map((r) => r.path)).toEqual(['/start']);
  expect(refused.requests).toEqual([]);

  hop.redirect = { status: 302, location: `${landing.url}/landed` };
  expect((await runCall(hop.url, '/start')).status).toBe('completed');
  expect(landing.requests.map((r) => r.path)).toEqual(['/landed']);
}, 60_000);

test('a vcs-host-a-action whose repository moved to another origin does not send the token there; a move within the host keeps it', async () => {
  const [sourceHost, elsewhere] = [await startFakeSourceHost(), await startFakeSourceHost()];
  hosts.push(sourceHost, elsewhere);
  // The other host would take the same token: only its absence makes the call fail there.
  elsewhere.token = sourceHost.token;
  sourceHost.repositories.add('acme/payments');
  elsewhere.repositories.add('other/payments');
  sourceHost.moved.set('acme/renamed', `${sourceHost.url}/repos/acme/payments`);
  sourceHost.moved.set('acme/transferred', `${elsewhere.url}/repos/other/payments`);
  const integration = await forge.call('POST', '/integrations', {
    name: 'source host',
    type: 'vcs-host-a',
    config: { base_url: sourceHost.url, token: sourceHost.token },
  });
  expect(integration.status).toBe(201);
  const mold = await forge.createMold({
    parameters: [{ name: 'repo', type: 'string', required: true }],
    actions: [
      {
        name: 'open-issue',
        type: 'vcs-host-a-action',
        config: { path: '/repos/acme/${{ parameters.repo }}/issues', body: { title: 'moved' } },
      },
    ],
  });

  const kept = await forge.finished((await forge.startRun(mold.slug, { repo: 'renamed' })).id);
  expect(kept.status).toBe('completed');
  expect(kept.steps[0].output.status).toBe(201);
  expect(sourceHost.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([
    ['POST', '/repos/acme/renamed/issues', `Bearer ${sourceHost.token}`],
    ['POST', '/repos/acme/payments/issues', `Bearer ${sourceHost.token}`],
  ]);

  const dropped = await forge.finished((await forge.startRun(mold.slug, { repo: 'transferred' })).id);
  expect(dropped.status).toBe('failed');
  expect(dropped.steps[0].error).toMatch(/answered 401: .*Bad credentials/);
  expect(elsewhere.requests).toEqual([
    { method: 'POST', path: '/repos/other/payments/issues', authorization: undefined, body: { title: 'moved' } },
  ]);
  expect(elsewhere.issues).toEqual([]);
}, 60_000);

test('an endless body: the step completes with the first 4 KiB and truncated, and the target sees the connection closed while it still writes', async () => {
  const endless = await target();
  endless.endless = true;
  const done = await runCall(endless.url, '/stream');
  expect(done.status).toBe('completed');
  expect(done.steps[0].output).toEqual({ status: 200, body: '0123456789abcdef'.repeat(256), truncated: true });
  expect(await forge.logMessages(done.id)).toContain('call: HTTP 200 (body truncated)');
  await until('the target to see the hang-up', 10, async () => (endless.hangUps === 1 ? true : undefined));
}, 60_000);

test('a target that never answers fails the step with a timeout naming the URL and the limit', async () => {
  const silent = await target();
  silent.delayMs = 600_000;
  const mold = await forge.createMold({
    actions: [
      { name: 'wait', type: 'api-call', config: { url: `${silent.url}/silent`, timeout_seconds: 1, max_attempts: 1 } },
    ],
  });
  const done = await forge.finished((await forge.startRun(mold.slug)).id);
  expect(done.status).toBe('failed');
  expect(done.steps[0].error).toBe(`GET ${silent.url}/silent timed out after 1 s`);
  await until('the target to see the hang-up', 10, async () => (silent.hangUps === 1 ? true : undefined));
}, 60_000);

test('cancelling the run aborts its request in flight: the run ends cancelled and the target sees the hang-up', async () => {
  const silent = await target();
  silent.delayMs = 600_000;
  const run = await forge.startRun(callMold, { base: silent.url, path: '/held' });
  await until('the request to arrive', 30, async () => (silent.requests.length === 1 ? true : undefined));
  expect((await forge.call('POST', `/forge/runs/${run.id}/cancel`, { comment: 'stop' })).status).toBe(200);
  expect((await forge.finished(run.id)).status).toBe('cancelled');
  await until('the target to see the hang-up', 10, async () => (silent.hangUps === 1 ? true : undefined));
}, 60_000);

test('a bad SHIPYARD_EGRESS_ALLOW entry stops a forge worker at start, naming the entry', async () => {
  const worker = launch(
    'workers/main.ts',
    ['forge'],
    { SHIPYARD_EGRESS_ALLOW: '127.0.0.77, 10.0.0.0/33' },
    { relay: false },
  );
  let stderr = '';
  worker.stderr?.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(worker, 'exit');
  expect(code).toBe(1);
  expect(stderr).toContain('SHIPYARD_EGRESS_ALLOW: "10.0.0.0/33" is not a CIDR range');
}, 90_000);
