import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain HTTP endpoint for forge api-call actions to hit over a real socket: it records each
 * request and answers with `status`, after `delayMs`.
 */
export interface Target {
  url: string;
  requests: { method: string; path: string; body: string }[];
  status: number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const target = { requests: [] as Target['requests'], status: 200, delayMs: 0 } as Target;
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    target.requests.push({ method: req.method ?? '', path: req.url ?? '', body });
    if (target.delayMs) await new Promise((resolve) => setTimeout(resolve, target.delayMs));
    res.statusCode = target.status;
    res.end(JSON.stringify({ ok: target.status < 400 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
