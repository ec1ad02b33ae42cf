import Koa, { type Middleware } from 'koa';
import './http/state';
import type { AppDeps } from './deps';
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
 * The liveness answer, serialized once: every orchestrator probes every replica every few
 * seconds. A prebuilt body also goes out without Koa's JSON serialization and type lookup:
 * ~1.5 µs of the ~25 µs of CPU a probe cost under load. A string, not a Buffer: Node sends a
 * string body in the same write(2) as the headers, a Buffer as a second chunk of a writev(2),
 * which cost 0.5–1.2 µs more a probe here.
 */
const HEALTHY = JSON.stringify({ status: 'ok' });

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
      // Set on Node's response: Koa then neither looks the type up nor types a string body as text.
      ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
      ctx.body = HEALTHY;
    },
  };
  // Outside /api/v1 and its document. With SHIPYARD_METRICS_PORT it is served by a listener of
  // its own (api/server.ts) and is a 404 here.
  if (deps.config.metrics.port === undefined) operators[METRICS_PATH] = metricsHandler(deps);

  app.use(requestContext(deps.logger));
  app.use(errorHandler());
  app.use(operatorEndpoints(operators));
  app.use(temporalCodecCors(deps.config.temporal.uiUrl));
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(referenceAssets());
  app.use(api);
  return app;
}
