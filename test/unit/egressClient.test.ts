import {
  createEgressClient,
  EgressError,
  type EgressClient,
  type EgressRequest,
  type Resolve,
} from '../../core/egress/egressClient';
import { parseEgressAllow } from '../../core/egress/egressRules';
import { startTarget, type Target } from '../support/httpTarget';
import { until } from '../support/processes';
import { FAKES_HOST } from '../support/testEnv';

// The egress client itself, against real local servers, for what a forge run makes awkward to
// arrange: host names, DNS answers, redirect chains, credentials and cancellation.
// (test/integration/egress.test.ts goes through forge runs.)

const targets: Target[] = [];
const target = async (host?: string, port?: number) => {
  const started = await startTarget(host, port);
  targets.push(started);
  return started;
};
afterEach(async () => {
  await Promise.all(targets.splice(0).map((t) => t.close()));
});

const client = (entries: string[] = [FAKES_HOST], resolve?: Resolve) =>
  createEgressClient(parseEgressAllow(entries), resolve);
const get = (egress: EgressClient, url: string, more: Partial<EgressRequest> = {}) =>
  egress.request({ method: 'GET', url, timeoutMs: 10_000, maxBodyBytes: 4096, ...more });
const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (err: unknown) => (err instanceof EgressError ? { failure: err.failure, message: err.message } : err),
  );
const portOf = (t: Target) => new URL(t.url).port;

test('a host name that resolves to a refused address (localhost → 127.0.0.1) is refused before any request; allowing the name reaches it', async () => {
  const local = await target('127.0.0.1');
  const url = `http://localhost:${portOf(local)}/status`;
  expect(await failureOf(get(client(), url))).toEqual({
    failure: 'refused',
    message: 'egress refused: localhost (127.0.0.1) is a loopback address (allow it with SHIPYARD_EGRESS_ALLOW)',
  });
  expect(local.requests).toEqual([]);
  expect(await get(client(['localhost']), url)).toEqual({ status: 200, body: '{"ok":true}', truncated: false });
  expect(local.requests).toHaveLength(1);
});

test('the connection goes to the address that was checked: a second DNS answer rebinding the name to 127.0.0.1 is never asked for', async () => {
  const rebound = await target('127.0.0.1');
  const allowed = await target(FAKES_HOST, Number(portOf(rebound)));
  const answers = [[{ address: FAKES_HOST, family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
  let asked = 0;
  const rebinding: Resolve = async () => answers[Math.min(asked++, 1)];
  const res = await get(client([FAKES_HOST], rebinding), `http://rebind.test:${portOf(rebound)}/data`);
  expect(res.status).toBe(200);
  expect(asked).toBe(1);
  expect(allowed.requests.map((r) => r.path)).toEqual(['/data']);
  expect(rebound.requests).toEqual([]);
});

test('one refused address among those a name resolves to refuses the host', async () => {
  const allowed = await target();
  const mixed: Resolve = async () => [
    { address: FAKES_HOST, family: 4 },
    { address: '127.0.0.1', family: 4 },
  ];
  expect(await failureOf(get(client([FAKES_HOST], mixed), `http://mixed.test:${portOf(allowed)}/`))).toEqual({
    failure: 'refused',
    message: expect.stringContaining('mixed.test (127.0.0.1) is a loopback address'),
  });
  expect(allowed.requests).toEqual([]);
  const clean: Resolve = async () => [{ address: FAKES_HOST, family: 4 }];
  expect((await get(client([FAKES_HOST], clean), `http://mixed.test:${portOf(allowed)}/`)).status).toBe(200);
});

test('an IPv6 literal host is checked: [::1] is refused unless allowed, with its port', async () => {
  const v6 = await target('::1');
  expect(await failureOf(get(client(), `${v6.url}/`))).toEqual({
    failure: 'refused',
    message: expect.stringContaining('::1 is a loopback address'),
  });
  expect(await failureOf(get(client([`[::1]:${Number(portOf(v6)) + 1}`]), `${v6.url}/`))).toEqual(
    expect.objectContaining({ failure: 'refused' }),
  );
  expect(v6.requests).toEqual([]);
  expect((await get(client([`[::1]:${portOf(v6)}`]), `${v6.url}/`)).status).toBe(200);
});

test('a redirect loop stops after 5 redirects (6 requests) as too many', async () => {
  const [a, b] = [await target(), await target()];
  a.redirect = { status: 302, location: `${b.url}/from-a` };
  b.redirect = { status: 302, location: `${a.url}/from-b` };
  expect(await failureOf(get(client(), `${a.url}/start`))).toEqual({
    failure: 'too-many-redirects',
    message: `GET ${a.url}/start redirected more than 5 times`,
  });
  expect(a.requests.length + b.requests.length).toBe(6);
});

test('a chain of 5 redirects is followed to its end', async () => {
  const end = await target();
  const chain = [await target(), await target(), await target(), await target(), await target()];
  chain.forEach(
    (t, i) =>
      (t.redirect = { status: 301, location: i + 1 < chain.length ? `${chain[i + 1].url}/next` : `${end.url}/end` }),
  );
  expect(await get(client(), `${chain[0].url}/start`)).toEqual({ status: 200, body: '{"ok":true}', truncated: false });
  expect(end.requests.map((r) => r.path)).toEqual(['/end']);
});

test('303 turns a POST into a GET without its body; 307 repeats the POST with its body', async () => {
  const [landing, seeOther, temporary] = [await target(), await target(), await target()];
  seeOther.redirect = { status: 303, location: `${landing.url}/after-303` };
  temporary.redirect = { status: 307, location: `${landing.url}/after-307` };
  const post = { method: 'POST', body: '{"n":1}', headers: { 'Content-Type': 'application/json' } };
  expect((await get(client(), `${seeOther.url}/form`, post)).status).toBe(200);
  expect((await get(client(), `${temporary.url}/form`, post)).status).toBe(200);
  expect(seeOther.requests).toEqual([{ method: 'POST', path: '/form', body: '{"n":1}' }]);
  expect(landing.requests).toEqual([
    { method: 'GET', path: '/after-303', body: '' },
    { method: 'POST', path: '/after-307', body: '{"n":1}' },
  ]);
});

test('a redirect to another origin drops Authorization and Cookie; one within the origin keeps them', async () => {
  const [start, elsewhere] = [await target(), await target()];
  const credentials = { headers: { Authorization: 'Bearer secret-token', Cookie: 'session=s1' } };
  start.redirect = { status: 302, location: `${start.url}/moved` };
  await get(client(), `${start.url}/old`, credentials);
  expect(start.requests).toEqual([
    { method: 'GET', path: '/old', body: '', authorization: 'Bearer secret-token', cookie: 'session=s1' },
    { method: 'GET', path: '/moved', body: '', authorization: 'Bearer secret-token', cookie: 'session=s1' },
  ]);
  start.redirect = { status: 307, location: `${elsewhere.url}/moved` };
  await get(client(), `${start.url}/old`, credentials);
  expect(elsewhere.requests).toEqual([{ method: 'GET', path: '/moved', body: '' }]);
});

test('a redirect to something other than an http(s) URL fails the request', async () => {
  const start = await target();
  start.redirect = { status: 302, location: 'file:///etc/passwd' };
  expect(await failureOf(get(client(), `${start.url}/`))).toEqual({
    failure: 'invalid-url',
    message: '"file:///etc/passwd" is not an absolute http(s) URL',
  });
});

test('a body of exactly the cap is whole; one byte less is truncated', async () => {
  const small = await target();
  expect(await get(client(), small.url, { maxBodyBytes: 11 })).toEqual({
    status: 200,
    body: '{"ok":true}',
    truncated: false,
  });
  expect(await get(client(), small.url, { maxBodyBytes: 10 })).toEqual({
    status: 200,
    body: '{"ok":true',
    truncated: true,
  });
});

test("the caller's abort rejects with its reason and closes the connection; a time limit fails as a timeout", async () => {
  const slow = await target();
  slow.delayMs = 60_000;
  const controller = new AbortController();
  const pending = get(client(), `${slow.url}/slow`, { signal: controller.signal });
  await until('the request to arrive', 10, async () => (slow.requests.length === 1 ? true : undefined));
  const reason = new Error('cancelled by the test');
  controller.abort(reason);
  await expect(pending).rejects.toBe(reason);
  await until('the target to see the hang-up', 10, async () => (slow.hangUps === 1 ? true : undefined));

  expect(await failureOf(get(client(), `${slow.url}/slow`, { timeoutMs: 200 }))).toEqual({
    failure: 'timeout',
    message: `GET ${slow.url}/slow timed out after 0.2 s`,
  });
  await until('the target to see the second hang-up', 10, async () => (slow.hangUps === 2 ? true : undefined));
});
