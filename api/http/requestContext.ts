import { performance } from 'node:perf_hooks';
import type { DefaultState, Middleware } from 'koa';
import type { Logger } from 'pino';
import { preformattedInfo } from '../../core/logging';
import { recordRequest } from '../metrics/requests';
import { requestIdSource } from './requestIds';

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * A request's ctx.state. Its child logger is made the first time something logs through it:
 * most requests log only their closing line, which the middleware writes with the id.
 */
class RequestState implements DefaultState {
  #log: Logger | undefined;
  tenantId?: string;
  route?: string;

  constructor(
    private readonly logger: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.logger.child({ request_id: this.requestId }));
  }
}

/**
 * Gives every request an id (echoed as X-Request-Id) and a child logger carrying it; when the
 * response is ready, logs one line and counts the request in the metrics. First in the chain,
 * so both see every request's final status, error envelopes included.
 */
export function requestContext(logger: Logger): Middleware {
  // The closing line's fields are our own and none is a credential: it is serialized here, and
  // skips pino's generic serialization and the redaction every other line pays for.
  const accessLog = preformattedInfo(logger, 'request');
  const nextRequestId = requestIdSource();
  return async (ctx, next) => {
    // Node's own request and response, not Koa's accessors: they lower-case and check the
    // header's name on every call, for a name that is a constant.
    const incoming = ctx.req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    const state = new RequestState(logger, requestId);
    ctx.state = state;
    ctx.res.setHeader('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const durationMs = performance.now() - started;
      recordRequest(state.route, ctx.method, ctx.status, durationMs / 1000);
      // The id is plain (SAFE_REQUEST_ID or ours) and the method a token Node's parser
      // accepted: neither needs escaping.
      accessLog(
        `"request_id":"${requestId}","method":"${ctx.method}","path":${JSON.stringify(ctx.path)},` +
          `"status":${ctx.status},"duration_ms":${Math.round(durationMs * 10) / 10}` +
          (state.tenantId === undefined ? '' : `,"tenant_id":${JSON.stringify(state.tenantId)}`),
      );
    }
  };
}
