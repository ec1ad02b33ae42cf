import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { Counter, Histogram } from 'prom-client';
import type { RouteDefinition } from '../http/route';
import { API_PREFIX, toKoaPath } from '../http/router';
import { httpRequestDuration, httpRequests } from './registry';

/** What no route matched (including a method a path does not serve): one label value. */
export const UNMATCHED = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

type Labels = 'route' | 'method' | 'status';
interface Series {
  count: Counter.Internal;
  duration: Histogram.Internal<Labels>;
}

/**
 * Koa route path → its label: the OpenAPI path of every API route, and `plain` paths (no
 * parameters) as they are.
 */
export function routeTemplates(routes: RouteDefinition[], plain: string[]): Map<string, string> {
  const templates = new Map(plain.map((path) => [path, path]));
  for (const route of routes) templates.set(`${API_PREFIX}${toKoaPath(route.path)}`, `${API_PREFIX}${route.path}`);
  return templates;
}

/**
 * Counts and times every request by route template. `templates` maps each Koa route path
 * (`/api/v1/forge/runs/:runId`) to its label (`/api/v1/forge/runs/{runId}`), built once at
 * start-up; any other path, and any method outside the standard ones, shares one label value,
 * so neither a URL nor a client can add series.
 *
 * Per request: one clock read at each end, three Map lookups for the series (each label set is
 * resolved once, the first time it is seen) and the increment and observation themselves.
 */
export function requestMetrics(templates: ReadonlyMap<string, string>): Middleware {
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const seriesOf = (route: string, method: string, status: number): Series => {
    let byMethod = series.get(route);
    if (!byMethod) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (!found) {
      const labels = { route, method, status: String(status) };
      found = { count: httpRequests.labels(labels), duration: httpRequestDuration.labels(labels) };
      byStatus.set(status, found);
    }
    return found;
  };
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const route = (typeof matched === 'string' && templates.get(matched)) || UNMATCHED;
      const method = METHODS.has(ctx.method) ? ctx.method : 'OTHER';
      const { count, duration } = seriesOf(route, method, ctx.status);
      count.inc();
      duration.observe((performance.now() - started) / 1000);
    }
  };
}
