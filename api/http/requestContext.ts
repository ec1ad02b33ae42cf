import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every request an id (echoed as X-Request-Id) and a child logger carrying it, then logs
 * one line when the response is done. The child is made the first time something logs through
 * it: most requests log only their closing line, which the process logger writes with the id.
 */
export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (log ??= logger.child({ request_id: requestId })),
      enumerable: true,
      configurable: true,
    });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          request_id: requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          duration_ms: Math.round(durationMs * 10) / 10,
          tenant_id: ctx.state.tenantId,
        },
        'request',
      );
    }
  };
}
