import { httpRequestDuration, httpRequests, recordRequest } from '../../api/metrics/requests';
import { processRegistry } from '../../api/metrics/registry';
import { VersionedCache } from '../../api/http/versionedCache';

type Sample = { value: number; labels: Record<string, string | number>; metricName?: string };

/** The samples of `metric` whose labels include `labels`, as `le` (or metric name) → value. */
async function samples(
  metric: typeof httpRequests | typeof httpRequestDuration,
  labels: Record<string, string>,
): Promise<Record<string, number>> {
  const { values } = (await metric.get()) as { values: Sample[] };
  const found: Record<string, number> = {};
  for (const sample of values) {
    if (!Object.entries(labels).every(([key, value]) => String(sample.labels[key]) === value)) continue;
    found[sample.labels.le === undefined ? (sample.metricName ?? 'value') : String(sample.labels.le)] = sample.value;
  }
  return found;
}

async function cacheCount(kind: 'hits' | 'misses', cache: string): Promise<number> {
  const metric = processRegistry.getSingleMetric(`shipyard_cache_${kind}_total`);
  const { values } = await metric!.get();
  return values.find((value) => value.labels.cache === cache)?.value ?? 0;
}

test('a request counts once, in the first bucket its duration fits (bounds included) and every one above it', async () => {
  const series = { route: '/unit/things/{id}', method: 'GET', status: '200' };
  recordRequest(series.route, 'GET', 200, 0.005);
  recordRequest(series.route, 'GET', 200, 0.007);
  recordRequest(series.route, 'GET', 200, 20);
  expect(await samples(httpRequests, series)).toEqual({ value: 3 });
  const histogram = await samples(httpRequestDuration, series);
  expect(histogram).toMatchObject({ '0.005': 1, '0.01': 2, '5': 2, '10': 2, '+Inf': 3 });
  expect(histogram.shipyard_http_request_duration_seconds_count).toBe(3);
  expect(histogram.shipyard_http_request_duration_seconds_sum).toBeCloseTo(20.012);
});

test('no route and a non-standard method each share one label value, so no request can add a series', async () => {
  recordRequest(undefined, 'PURGE', 404, 0.001);
  recordRequest(undefined, 'GET', 404, 0.001);
  expect(await samples(httpRequests, { route: 'unmatched', method: 'OTHER', status: '404' })).toEqual({ value: 1 });
  expect(await samples(httpRequests, { route: 'unmatched', method: 'GET', status: '404' })).toEqual({ value: 1 });
});

test('the process registry renders the request series in Prometheus text', async () => {
  recordRequest('/unit/rendered', 'POST', 201, 0.02);
  const text = await processRegistry.metrics();
  expect(text).toContain('# TYPE shipyard_http_requests_total counter');
  expect(text).toContain('shipyard_http_requests_total{route="/unit/rendered",method="POST",status="201"} 1');
  expect(text).toContain('# TYPE shipyard_http_request_duration_seconds histogram');
  expect(text).toContain(
    'shipyard_http_request_duration_seconds_bucket{le="0.025",route="/unit/rendered",method="POST",status="201"} 1',
  );
  expect(text).toContain(
    'shipyard_http_request_duration_seconds_bucket{le="0.01",route="/unit/rendered",method="POST",status="201"} 0',
  );
});

test('a VersionedCache counts a hit for a cached value and a miss for a load, under its name', async () => {
  const cache = new VersionedCache<string>(60_000, Date.now, () => true, 'unit-cache');
  expect([await cacheCount('misses', 'unit-cache'), await cacheCount('hits', 'unit-cache')]).toEqual([0, 0]);
  await cache.getOrLoad('k', async () => 'v');
  await cache.getOrLoad('k', async () => 'v');
  await cache.getOrLoad('other', async () => undefined);
  expect([await cacheCount('misses', 'unit-cache'), await cacheCount('hits', 'unit-cache')]).toEqual([2, 1]);
});
