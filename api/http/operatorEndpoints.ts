import type { Middleware } from 'koa';
import { ApiError } from '../../core/errors';

/**
 * Endpoints for operators outside the API (`/healthz`, `/metrics`): fixed paths, read only,
 * found by one Map lookup ahead of the API's router. Probes and scrapes hit them every few
 * seconds on every replica, and a router's dispatch was the largest share of a probe's CPU.
 * Another method on one of these paths is a 405; any other path goes on down the chain.
 */
export function operatorEndpoints(endpoints: Record<string, Middleware>): Middleware {
  const byPath = new Map(Object.entries(endpoints));
  return (ctx, next) => {
    const endpoint = byPath.get(ctx.path);
    if (!endpoint) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on this path`, [], { allow: 'GET, HEAD' });
    }
    ctx.state.route = ctx.path;
    return endpoint(ctx, next);
  };
}
