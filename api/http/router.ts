import Router from '@koa/router';
import type { AppDeps } from '../deps';
import { successStatus, type RouteDefinition } from './route';
import { compileBody, compileParams, compileQuery } from './validation';

export const API_PREFIX = '/api/v1';

/** `/forge/molds/{slug}` (OpenAPI, how routes are declared) → `/forge/molds/:slug` (Koa). */
export const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/**
 * Mounts every route under /api/v1 with its validators compiled once, at start-up. A handler
 * runs only on input that matched its schemas; what it returns becomes the response body.
 */
export function buildApiRouter(routes: RouteDefinition[], deps: AppDeps): Router {
  const router = new Router({ prefix: API_PREFIX });
  for (const route of routes) {
    const params = compileParams(route.params);
    const query = compileQuery(route.query);
    const body = compileBody(route.body);
    const status = successStatus(route);
    router.register(toKoaPath(route.path), [route.method], async (ctx) => {
      const input = {
        // Copies: the validators coerce and fill defaults in place.
        params: params({ ...ctx.params }),
        query: query({ ...ctx.query }),
        body: body(ctx.request.body),
        deps,
        ctx,
      };
      const result = await route.handler(input);
      ctx.status = status;
      if (status !== 204) ctx.body = result;
    });
  }
  return router;
}
