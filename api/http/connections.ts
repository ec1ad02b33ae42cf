import { createServer, type RequestListener, type Server } from 'node:http';
import type { ResourceLimits } from '../../core/limitsConfig';
import { answerClientErrors } from './clientErrors';

/**
 * How often Node looks for requests over their time: its default (30 s) would let a client that
 * never finishes its headers hold its socket that much past `headersTimeout`.
 */
const CONNECTIONS_CHECK_MS = 1_000;

/**
 * An HTTP server for the API (or its metrics listener) that lets no client hold a socket for
 * nothing: a request must arrive whole within `requestTimeoutMs` (its headers within
 * `headersTimeoutMs`; Node answers 408), an idle kept-alive connection closes after
 * `keepAliveTimeoutMs`, and a socket with no traffic either way for `socketIdleTimeoutMs` is
 * destroyed, its descriptor freed. A response meant to stay open (a followed run log) lifts the
 * last for its own socket. Parser refusals get the error envelope (answerClientErrors).
 */
export function createApiServer(listener: RequestListener, limits: ResourceLimits['connections']): Server {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    listener,
  );
  server.setTimeout(limits.socketIdleTimeoutMs);
  server.on('timeout', (socket: { destroy(): void }) => socket.destroy());
  answerClientErrors(server);
  return server;
}
