import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * This process's metrics. Label values are never tenant data: route templates (never raw
 * paths), methods, statuses, cache and pool names, each from a fixed, small set.
 */
export const processRegistry = new Registry();

export const httpRequests = new Counter({
  name: 'shipyard_http_requests_total',
  help: 'HTTP requests answered, by route template (unmatched: no route), method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [processRegistry],
});

export const httpRequestDuration = new Histogram({
  name: 'shipyard_http_request_duration_seconds',
  help: 'Time from the request reaching the app to its response being ready, by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

const cacheHits = new Counter({
  name: 'shipyard_cache_hits_total',
  help: 'Lookups answered from an in-process cache, by cache',
  labelNames: ['cache'] as const,
  registers: [processRegistry],
});

const cacheMisses = new Counter({
  name: 'shipyard_cache_misses_total',
  help: 'Lookups an in-process cache could not answer (loaded, or joined a load under way), by cache',
  labelNames: ['cache'] as const,
  registers: [processRegistry],
});

export interface CacheCounters {
  hit(): void;
  miss(): void;
}

/** The counters of one cache, resolved once when the cache is built. */
export function cacheCounters(cache: string): CacheCounters {
  const hits = cacheHits.labels(cache);
  const misses = cacheMisses.labels(cache);
  // Both series exist from the start, so a rate is defined before the first miss.
  hits.inc(0);
  misses.inc(0);
  return { hit: () => hits.inc(), miss: () => misses.inc() };
}

let processMetricsStarted = false;

/** prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC), started once. */
export function collectProcessMetrics(): void {
  if (processMetricsStarted) return;
  processMetricsStarted = true;
  collectDefaultMetrics({ register: processRegistry });
}
