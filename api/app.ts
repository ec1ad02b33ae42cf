import Koa, { type Middleware } from 'koa';
import './http/state';
import type { AppDeps } from './deps';
import { ApiError } from '../core/errors';
import { errorHandler } from './http/errorHandler';
import { jsonBody } from './http/jsonBody';
import { METRICS_PATH, metricsHandler } from './metrics/endpoint';
import { operatorEndpoints } from './http/operatorEndpoints';
import { requestContext } from './http/requestContext';
import type { RouteDefinition } from './http/route';
import { buildApiRouter } from './http/router';
import { referenceAssets, withApiReference } from './openapi/routes';
import { apiRoutes } from './routes';
import { temporalCodecCors } from './temporalCodec/cors';

/**
 * Builds the Koa app: middleware, then every route of `routes` (plus the OpenAPI document and
 * reference page describing them). Tests pass extra routes to drive the middleware directly.
 */
export function buildApp(deps: AppDeps, routes: RouteDefinition[] = apiRoutes): Koa {
  const app = new Koa();
  // Errors Koa could not answer (the response had begun). A client leaving a log stream is normal.
  app.on('error', (err: { code?: string }, ctx?: Koa.Context) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    (ctx?.state.log ?? deps.logger).error({ err }, 'response failed after it began');
  });
  const documented = withApiReference(routes);
  const api = buildApiRouter(documented, deps);
  const operators: Record<string, Middleware> = {
    // Liveness only: answers while the process serves HTTP, whatever the services' state.
    '/healthz': (ctx) => {
      ctx.body = { status: 'ok' };
    },
  };
  // Outside /api/v1 and its document. With SHIPYARD_METRICS_PORT it is served by a listener of
  // its own (api/server.ts) and is a 404 here.
  if (deps.config.metrics.port === undefined) operators[METRICS_PATH] = metricsHandler(deps);

  app.use(requestContext(deps.logger));
  app.use(temporalCodecCors(deps.config.temporal.uiUrl));
  app.use(errorHandler());
  // What no route answered becomes an error envelope. allowedMethods sets the status and the
  // Allow header: 405 for a method the path does not serve, 501 for one the router has never
  // heard of (QUERY, TRACE), which is the same mistake to a client: 405 with Allow. A path no
  // route has is a 404 whatever the method.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    const allow = ctx.response.get('allow');
    if ((ctx.status === 405 || ctx.status === 501) && allow) {
      throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on this path`, [], { allow });
    }
    if (ctx.status === 404 || ctx.status === 501) throw new ApiError('NOT_FOUND', 'No such endpoint');
  });
  app.use(operatorEndpoints(operators));
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(referenceAssets());
  app.use(api.routes);
  app.use(api.allowedMethods);
  return app;
}
