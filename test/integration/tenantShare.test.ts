import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { defineRoute } from '../../api/http/route';
import { apiRoutes } from '../../api/routes';
import { bearer, callApi, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// Each tenant's share of an API process: two requests in progress at once here, a line of 300 ms
// for the rest. A tenant's flood waits behind itself; another tenant's request goes straight in.

const SLOW_MS = 400;
const slowRoute = defineRoute({
  method: 'GET',
  path: '/test/slow',
  tag: 'Test',
  access: 'catalog:read',
  transaction: 'on-demand',
  summary: 'answers after a while, holding nothing but its share',
  responses: { 200: { description: 'done', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
  handler: async () => {
    await sleep(SLOW_MS);
    return { ok: true };
  },
});

let api: TestApi;
let flooder: string;
let other: string;

beforeAll(async () => {
  const config = testConfig();
  const limits = { ...config.limits, requests: { perSecond: 1000, concurrentPerTenant: 2, queueWaitMs: 300 } };
  api = await startApi({ deps: await testDeps({ ...config, limits }), routes: [...apiRoutes, slowRoute] });
  const run = randomUUID().slice(0, 8);
  flooder = (await sessionToken({ tenant: `share-a-${run}`, email: 'a@share.test', roles: ['viewer'] })).token;
  other = (await sessionToken({ tenant: `share-b-${run}`, email: 'b@share.test', roles: ['viewer'] })).token;
});
afterAll(() => api.close());

test("a tenant past its share waits in line, then gets 429 with Retry-After, while another tenant's request goes straight in", async () => {
  const flood = Array.from({ length: 6 }, async () => {
    const res = await fetch(`${api.url}/api/v1/test/slow`, { headers: bearer(flooder) });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as { error: { code: string } },
    };
  });
  await sleep(50); // the flood has taken its share and formed its line
  const started = Date.now();
  const alone = await callApi(api, other, 'GET', '/test/slow');
  const otherTook = Date.now() - started;
  expect(alone.status).toBe(200);
  // Not behind the flooder's six: no more than its own time and a margin for a busy machine.
  expect(otherTook).toBeLessThan(SLOW_MS + 300);

  const answers = await Promise.all(flood);
  const statuses = answers.map((answer) => answer.status).sort();
  // Two served at once; the line waits 300 ms, less than one request takes: the rest are refused.
  expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
  const refused = answers.find((answer) => answer.status === 429)!;
  expect(refused.retryAfter).toBe('1');
  expect(refused.body.error.code).toBe('RATE_LIMITED');
});

test('a tenant whose line moves within the wait is served in full, in turn', async () => {
  const quick = Array.from({ length: 3 }, () => callApi(api, other, 'GET', '/me'));
  expect((await Promise.all(quick)).map((answer) => answer.status)).toEqual([200, 200, 200]);
});
