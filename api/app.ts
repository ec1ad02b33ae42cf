import Koa, { type Middleware } from 'koa';
import './http/state';
import type { AppDeps } from './deps';
import { errorHandler } from './http/errorHandler';
import { jsonBody } from './http/jsonBody';
import { agentPushBudgets } from './k8s/pushBudgets';
import { receiverBodyBudget } from './integrations/receiverRoutes';
import { METRICS_PATH, metricsHandler } from './metrics/endpoint';
import { operatorEndpoints } from './http/operatorEndpoints';
import { LIVENESS_PATH, livenessEndpoint } from './http/liveness';
import { RequestRecorder, requestContext } from './http/requestContext';
import type { RouteDefinition } from './http/route';
import { buildApiRouter } from './http/router';
import { referenceAssets, withApiReference } from './openapi/routes';
import { apiRoutes } from './routes';
import { temporalCodecCors } from './temporalCodec/cors';
import { temporalCodecSignInCookie } from './temporalCodec/signIn';

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
    [LIVENESS_PATH]: livenessEndpoint,
  };
  // Outside /api/v1 and its document. With SHIPYARD_METRICS_PORT it is served by a listener of
  // its own (api/server.ts) and is a 404 here.
  if (deps.config.metrics.port === undefined) operators[METRICS_PATH] = metricsHandler(deps);

  app.use(requestContext(new RequestRecorder(deps.logger)));
  app.use(errorHandler());
  app.use(operatorEndpoints(operators));
  app.use(temporalCodecCors(deps.config.temporal.uiUrl));
  app.use(temporalCodecSignInCookie(deps.config));
  app.use(
    jsonBody(deps.config.bodyLimitBytes, deps.config.inputLimits, {
      ...agentPushBudgets(deps.config.agents, deps.config.operations),
      ...receiverBodyBudget(deps.config),
    }),
  );
  app.use(referenceAssets());
  app.use(api);
  return app;
}
