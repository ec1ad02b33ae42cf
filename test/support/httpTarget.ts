import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { FAKES_HOST } from './testEnv';

/**
 * A plain HTTP endpoint for forge api-call actions to hit over a real socket: it records each
 * request (with its credentials, when it carries any) and answers with `status`, after
 * `delayMs`, or with a body that never ends (`endless`). With `redirect` set, every URL but the
 * redirect's own location answers with that redirect instead, as a moved page does. `hangUps`
 * counts answers the client closed the connection on before they were complete.
 */
export interface Target {
  url: string;
  requests: { method: string; path: string; body: string; authorization?: string; cookie?: string }[];
  status: number;
  delayMs: number;
  redirect?: { status: number; location: string };
  endless: boolean;
  hangUps: number;
  close(): Promise<void>;
}

const ENDLESS_CHUNK = Buffer.from('0123456789abcdef'.repeat(64));

/**
 * Listens on the fakes' allowed loopback address unless told another (e.g. a refused
 * 127.0.0.1), on any free port unless told one.
 */
export async function startTarget(host = FAKES_HOST, port = 0): Promise<Target> {
  const target = { requests: [] as Target['requests'], status: 200, delayMs: 0, endless: false, hangUps: 0 } as Target;
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const { authorization, cookie } = req.headers;
    target.requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      body,
      ...(authorization && { authorization }),
      ...(cookie && { cookie }),
    });
    // Ends the wait or the stream when the client goes, so no timer outlives the request.
    const hungUp = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) target.hangUps += 1;
      hungUp.abort();
    });
    if (target.delayMs) await sleep(target.delayMs, undefined, { signal: hungUp.signal }).catch(() => undefined);
    if (hungUp.signal.aborted) return;
    const { redirect } = target;
    if (redirect && new URL(req.url ?? '/', target.url).href !== redirect.location) {
      res.writeHead(redirect.status, { location: redirect.location });
      res.end();
      return;
    }
    res.statusCode = target.status;
    if (!target.endless) {
      res.end(JSON.stringify({ ok: target.status < 400 }));
      return;
    }
    res.setHeader('content-type', 'text/plain');
    const gone = once(hungUp.signal, 'abort');
    while (!hungUp.signal.aborted) {
      if (!res.write(ENDLESS_CHUNK)) await Promise.race([once(res, 'drain'), gone]);
    }
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  target.url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  target.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return target;
}

/** A URL on which nothing listens (a port just released), so a request there is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, FAKES_HOST, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://${FAKES_HOST}:${port}`;
}
