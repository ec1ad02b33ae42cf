import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import Koa from 'koa';
import pino from 'pino';
import '../../api/http/state';
import { requestContext } from '../../api/http/requestContext';

// The request id reaches every log line of its request: the closing line (written once the
// response has gone out), and what a handler logs through ctx.state.log (a child the middleware
// makes only when something uses it).
test('the closing line and a handler’s own line both carry the request id', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const app = new Koa();
  app.use(requestContext(pino({ level: 'info' }, sink)));
  app.use((ctx) => {
    if (ctx.path === '/warns') ctx.state.log.warn('from the handler');
    // A body that takes 100 ms to send: the closing line times the response to its last byte.
    ctx.body =
      ctx.path === '/slow-body'
        ? Readable.from(
            (async function* () {
              yield 'first ';
              await new Promise((resolve) => setTimeout(resolve, 100));
              yield 'last';
            })(),
          )
        : 'ok';
  });
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const quiet = await fetch(`${base}/quiet`, { headers: { 'x-request-id': 'req-quiet' } });
    const warns = await fetch(`${base}/warns`, { headers: { 'x-request-id': 'req-warns' } });
    expect([quiet.headers.get('x-request-id'), warns.headers.get('x-request-id')]).toEqual(['req-quiet', 'req-warns']);
    expect(await (await fetch(`${base}/slow-body`, { headers: { 'x-request-id': 'req-slow' } })).text()).toBe(
      'first last',
    );
  } finally {
    server.close();
  }
  // Each closing line is written once its response has gone out.
  for (let wait = 0; lines.length < 4 && wait < 100; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(lines.map(({ request_id, msg, path }) => ({ request_id, msg, path }))).toEqual([
    { request_id: 'req-quiet', msg: 'request', path: '/quiet' },
    { request_id: 'req-warns', msg: 'from the handler', path: undefined },
    { request_id: 'req-warns', msg: 'request', path: '/warns' },
    { request_id: 'req-slow', msg: 'request', path: '/slow-body' },
  ]);
  expect(lines[3].duration_ms).toBeGreaterThanOrEqual(90);
});
