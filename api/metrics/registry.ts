import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { httpRequestDuration, httpRequests } from './requests';

/**
 * This process's metrics. Label values are never tenant data: route templates (never raw
 * paths), methods, statuses, cache and pool names, each from a fixed, small set.
 */
export const processRegistry = new Registry();
processRegistry.registerMetric(httpRequests);
processRegistry.registerMetric(httpRequestDuration);

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
