import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { closeDeps, createDeps, type AppDeps } from '../../api/deps';
import { testConfig } from '../support/harness';

// GET /healthz: public, answered whatever the services' state, and recorded like every request.

const lines: Record<string, unknown>[] = [];
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
  server = createServer(buildApp(deps).callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await closeDeps(deps);
});

test.each(['GET', 'HEAD'] as const)('%s /healthz answers 200 as JSON without a token', async (method) => {
  const res = await fetch(`${base}/healthz`, { method });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('x-request-id')).toMatch(
    /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  expect(await res.text()).toBe(method === 'GET' ? '{"status":"ok"}' : '');
});

test('a probe keeps a safe caller id and writes its closing line', async () => {
  await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
  expect(lines.find((line) => line.msg === 'request' && line.request_id === 'probe-1')).toMatchObject({
    method: 'GET',
    path: '/healthz',
    status: 200,
  });
});

test('another method on /healthz is refused with 405 and the methods it allows', async () => {
  const res = await fetch(`${base}/healthz`, { method: 'DELETE' });
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('GET, HEAD');
});
