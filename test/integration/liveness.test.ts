import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { closeDeps, createDeps, type AppDeps } from '../../api/deps';
import { testConfig } from '../support/harness';

// GET and HEAD /healthz are answered ahead of Koa (api/http/liveness.ts); a query string or
// another method reaches Koa's chain, which answers the probe too. The two lanes must not be
// told apart from outside: same status, headers and body, same closing log line.

const lines: Record<string, unknown>[] = [];
const koaSaw: string[] = [];
let deps: AppDeps;
let server: Server;
let base: string;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  deps = await createDeps(testConfig(), pino({ level: 'info' }, sink));
  const app = buildApp(deps);
  // Before the app's own middleware: sees every request that reaches Koa's chain.
  app.middleware.unshift((ctx, next) => {
    koaSaw.push(`${ctx.method} ${ctx.url}`);
    return next();
  });
  server = createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  koaSaw.length = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await closeDeps(deps);
});

/** What a client sees of an answer, with the request id's shape in place of its value. */
async function seen(path: string, method: 'GET' | 'HEAD') {
  const res = await fetch(`${base}${path}`, { method });
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
  expect(headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  return { status: res.status, headers: { ...headers, 'x-request-id': 'an id' }, body: await res.text() };
}

/** The closing line of the request whose X-Request-Id was `id`, without what differs per request. */
const closingLine = (id: string) => {
  const line = lines.find((l) => l.msg === 'request' && l.request_id === id);
  expect(line).toBeDefined();
  const { time: _time, duration_ms: duration, request_id: _id, ...rest } = line!;
  expect(typeof duration).toBe('number');
  return rest;
};

test.each(['GET', 'HEAD'] as const)('%s /healthz is answered ahead of Koa as Koa answers it', async (method) => {
  const ahead = await seen('/healthz', method);
  const throughKoa = await seen('/healthz?lane=koa', method);
  expect(koaSaw).toEqual([`${method} /healthz?lane=koa`]);
  expect(ahead).toEqual(throughKoa);
  expect(ahead).toMatchObject({
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '15' },
    body: method === 'GET' ? '{"status":"ok"}' : '',
  });
});

test('both lanes keep a safe caller id and write the same closing line', async () => {
  await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'probe-ahead' } });
  await fetch(`${base}/healthz?lane=koa`, { headers: { 'x-request-id': 'probe-koa' } });
  // Koa's chain logs the path without its query string.
  expect(closingLine('probe-ahead')).toEqual(closingLine('probe-koa'));
  expect(closingLine('probe-ahead')).toMatchObject({ method: 'GET', path: '/healthz', status: 200 });
});

test('another method on /healthz still reaches Koa, which refuses it', async () => {
  const res = await fetch(`${base}/healthz`, { method: 'DELETE' });
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('GET, HEAD');
  expect(koaSaw).toEqual(['DELETE /healthz']);
});
