import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type Koa from 'koa';
import { errorEnvelopeSchema } from '../../api/http/errorHandler';
import type { RouteDefinition } from '../../api/http/route';
import { API_PREFIX } from '../../api/http/router';

/**
 * Checks every JSON response the app sends against what its route declares: the schema of the
 * status it answered with, or the error envelope for an error. The test harness mounts it in
 * front of the real app, so a response that drifts from the OpenAPI document fails the suite
 * that provoked it, whichever test did.
 */
export function responseContract(routes: RouteDefinition[]) {
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  const errorEnvelope = ajv.compile(errorEnvelopeSchema);
  const validators = new Map<string, Map<number, ValidateFunction>>();
  for (const route of routes) {
    const byStatus = new Map<number, ValidateFunction>();
    for (const [status, spec] of Object.entries(route.responses)) {
      if (spec.schema) byStatus.set(Number(status), ajv.compile(spec.schema));
    }
    validators.set(`${route.method} ${API_PREFIX}${route.path}`, byStatus);
  }
  const violations = new Set<string>();

  const middleware: Koa.Middleware = async (ctx, next) => {
    await next();
    if (!ctx.response.is('json') || ctx.body === undefined || ctx.body === null) return;
    const body: unknown = JSON.parse(JSON.stringify(ctx.body));
    const route = validators.get(`${ctx.method} ${ctx.state.route}`);
    const validate = ctx.status >= 400 ? errorEnvelope : route?.get(ctx.status);
    const where = `${ctx.method} ${ctx.path} → ${ctx.status}`;
    if (!validate) {
      // A JSON success outside the API (liveness, reference assets) has no declared schema.
      if (route || ctx.path.startsWith(API_PREFIX)) violations.add(`${where}: no schema declared for this status`);
      return;
    }
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
      );
      violations.add(`${where}: ${problems.join('; ')}`);
    }
  };

  return {
    middleware,
    /** Throws with every response that broke its contract since the app started. */
    assertKept(): void {
      if (violations.size) {
        throw new Error(`Responses that do not match their declared schema:\n${[...violations].join('\n')}`);
      }
    },
  };
}
