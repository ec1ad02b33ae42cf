import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAKES_HOST } from './testEnv';

/** How the receiver answers one request: a status (with Retry-After), or never (`hang`). */
export type ReceiverAnswer = { status: number; retryAfter?: string } | 'hang';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

/**
 * A local webhook receiver over a real socket, on the fakes' allowed address: it records every
 * request (headers and raw body, as a receiver must verify them) and answers each with the
 * next of `script`, then with `fallback` (200 unless changed). `arrival(n)` resolves once n
 * requests have come.
 */
export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  script: ReceiverAnswer[];
  fallback: ReceiverAnswer;
  arrival(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(host = FAKES_HOST): Promise<WebhookReceiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver = { requests: [], script: [], fallback: { status: 200 } } as unknown as WebhookReceiver;
  const server: Server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    receiver.requests.push({ headers: req.headers, body, at: Date.now() });
    for (const waiter of waiters.filter((w) => receiver.requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const answer = receiver.script.shift() ?? receiver.fallback;
    if (answer === 'hang') return; // until the sender gives up, or close()
    res.writeHead(answer.status, answer.retryAfter ? { 'retry-after': answer.retryAfter } : {});
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  receiver.url = `http://${host}:${(server.address() as AddressInfo).port}/hook`;
  receiver.arrival = (count, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      if (receiver.requests.length >= count) return resolve(receiver.requests.slice(0, count));
      const timer = setTimeout(
        () => reject(new Error(`receiver got ${receiver.requests.length} of ${count} requests`)),
        timeoutMs,
      );
      waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(receiver.requests.slice(0, count));
        },
      });
    });
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
