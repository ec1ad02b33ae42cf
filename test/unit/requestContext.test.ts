import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import pino from 'pino';
import '../../api/http/state';
import { RequestRecorder, requestContext } from '../../api/http/requestContext';

/** Serves `app` while `requests` run against its base URL; the log lines its logger wrote. */
async function serve(handler: Koa.Middleware, requests: (base: string) => Promise<void>) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const app = new Koa();
  app.use(requestContext(new RequestRecorder(pino({ level: 'info', redact: ['*.token'] }, sink))));
  app.use(handler);
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await requests(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
  return lines;
}

// The request id reaches every log line of its request: the closing line, and what a handler
// logs through ctx.state.log (a child the middleware makes only when something uses it).
test('the closing line and a handler’s own line both carry the request id', async () => {
  const lines = await serve(
    (ctx) => {
      if (ctx.path === '/warns') ctx.state.log.warn('from the handler');
      ctx.body = 'ok';
    },
    async (base) => {
      const quiet = await fetch(`${base}/quiet`, { headers: { 'x-request-id': 'req-quiet' } });
      const warns = await fetch(`${base}/warns`, { headers: { 'x-request-id': 'req-warns' } });
      expect([quiet.headers.get('x-request-id'), warns.headers.get('x-request-id')]).toEqual([
        'req-quiet',
        'req-warns',
      ]);
    },
  );
  expect(lines.map(({ request_id, msg, path }) => ({ request_id, msg, path }))).toEqual([
    { request_id: 'req-quiet', msg: 'request', path: '/quiet' },
    { request_id: 'req-warns', msg: 'from the handler', path: undefined },
    { request_id: 'req-warns', msg: 'request', path: '/warns' },
  ]);
});

// The closing line skips the logger's redaction (it holds no credential); a handler's lines keep it.
test('what a handler logs through ctx.state.log is still redacted', async () => {
  const lines = await serve(
    (ctx) => {
      ctx.state.log.info({ key: { token: 'shp_svc_secret' } }, 'from the handler');
      ctx.body = 'ok';
    },
    async (base) => {
      await fetch(`${base}/logs-a-key`);
    },
  );
  expect(lines[0]).toMatchObject({ msg: 'from the handler', key: { token: '[Redacted]' } });
  expect(lines[1]).toMatchObject({ msg: 'request', path: '/logs-a-key' });
});
