import { Counter, Histogram } from 'prom-client';

/** What no route matched (including a method a path does not serve): one label value. */
export const UNMATCHED = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const LABELS = ['route', 'method', 'status'] as const;

export const httpRequests = new Counter({
  name: 'shipyard_http_requests_total',
  help: 'HTTP requests answered, by route template (unmatched: no route), method and status',
  labelNames: LABELS,
  registers: [],
});

export const httpRequestDuration = new Histogram({
  name: 'shipyard_http_request_duration_seconds',
  help: 'Time from the request reaching the app to its response being ready, by route template, method and status',
  labelNames: LABELS,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [],
});

/**
 * Counts and times one answered request. `route` is the template that answered it
 * (`/api/v1/forge/runs/{runId}`, `/healthz`), undefined when none did; any method outside the
 * standard ones counts as `OTHER`, so neither a URL nor a client can add series.
 */
export function recordRequest(route: string | undefined, method: string, status: number, seconds: number): void {
  const labels = { route: route ?? UNMATCHED, method: METHODS.has(method) ? method : 'OTHER', status };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, seconds);
}
