import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSync } from 'node:fs';
import pino from 'pino';
import { createDeps } from '../../api/deps';
import { buildMetricsApp } from '../../api/metrics/endpoint';
import {
  bearer,
  callApi,
  jsonOf,
  sessionToken,
  startApi,
  testConfig,
  testDeps,
  type TestApi,
} from '../support/harness';
import { createLogger } from '../../core/logging';
import { freePort, launch, stop, until } from '../support/processes';

/** One sample of a Prometheus text exposition. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels` (0 when absent). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const run = randomUUID().slice(0, 8);

describe('GET /metrics on the main port (the default)', () => {
  let api: TestApi;
  let admin: Awaited<ReturnType<typeof sessionToken>>;
  beforeAll(async () => {
    api = await startApi();
    admin = await sessionToken({ tenant: `metrics-${run}`, email: 'admin@metrics.test', roles: ['admin'] });
  });
  afterAll(() => api.close());

  test('counts a request under its route template and status, with duration buckets, never its raw path', async () => {
    const series = { route: '/api/v1/admin/api-keys/{id}', method: 'DELETE', status: '404' };
    const before = await scrape(api.url);
    expect((await callApi(api, admin.token, 'DELETE', `/admin/api-keys/${randomUUID()}`)).status).toBe(404);
    const after = await scrape(api.url);
    expect(valueOf(after, 'shipyard_http_requests_total', series)).toBe(
      valueOf(before, 'shipyard_http_requests_total', series) + 1,
    );
    expect(valueOf(after, 'shipyard_http_request_duration_seconds_count', series)).toBe(
      valueOf(before, 'shipyard_http_request_duration_seconds_count', series) + 1,
    );
    const buckets = after.filter(
      (sample) =>
        sample.name === 'shipyard_http_request_duration_seconds_bucket' && sample.labels.route === series.route,
    );
    expect(buckets.map((bucket) => bucket.labels.le)).toEqual(expect.arrayContaining(['0.005', '1', '+Inf']));
  });

  test('/healthz is counted under its own path, as a route', async () => {
    const series = { route: '/healthz', method: 'GET', status: '200' };
    const before = valueOf(await scrape(api.url), 'shipyard_http_requests_total', series);
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect(valueOf(await scrape(api.url), 'shipyard_http_requests_total', series)).toBe(before + 1);
  });

  test('a path no route matches, whatever it holds, is counted under the one label "unmatched"', async () => {
    const series = { route: 'unmatched', method: 'GET', status: '404' };
    const before = await scrape(api.url);
    const res = await fetch(`${api.url}/api/v1/no-such-thing/${admin.tenantId}`);
    expect(res.status).toBe(404);
    await res.body?.cancel();
    const after = await scrape(api.url);
    expect(valueOf(after, 'shipyard_http_requests_total', series)).toBe(
      valueOf(before, 'shipyard_http_requests_total', series) + 1,
    );
  });

  test('the app and system pools report used, free, pending and max connections at scrape time', async () => {
    const samples = await scrape(api.url);
    for (const pool of ['app', 'system']) {
      for (const stat of ['used', 'free', 'pending']) {
        expect(
          samples.some((sample) => sample.name === `shipyard_db_pool_${stat}` && sample.labels.pool === pool),
        ).toBe(true);
      }
    }
    expect(valueOf(samples, 'shipyard_db_pool_max', { pool: 'app' })).toBe(api.deps.config.database.poolMax);
  });

  test('the API-key cache counts a miss on a key’s first use and a hit on its second; the teams cache likewise', async () => {
    const key = await callApi(api, admin.token, 'POST', '/admin/api-keys', {
      name: 'metrics',
      scopes: ['catalog:read'],
    });
    expect(key.status).toBe(201);
    const apiKeys = { cache: api.deps.apiKeyCache.name };
    const teams = { cache: api.deps.teamsCache.name };
    const counts = (samples: Sample[], cache: Record<string, string>) => [
      valueOf(samples, 'shipyard_cache_misses_total', cache),
      valueOf(samples, 'shipyard_cache_hits_total', cache),
    ];

    const before = await scrape(api.url);
    expect((await callApi(api, key.body.token, 'GET', '/me')).status).toBe(200);
    const afterFirst = await scrape(api.url);
    expect((await callApi(api, key.body.token, 'GET', '/me')).status).toBe(200);
    const afterSecond = await scrape(api.url);
    const [misses, hits] = counts(before, apiKeys);
    expect(counts(afterFirst, apiKeys)).toEqual([misses + 1, hits]);
    expect(counts(afterSecond, apiKeys)).toEqual([misses + 1, hits + 1]);

    const [teamMisses, teamHits] = counts(afterSecond, teams);
    expect((await callApi(api, admin.token, 'GET', '/teams')).status).toBe(200);
    expect((await callApi(api, admin.token, 'GET', '/teams')).status).toBe(200);
    expect(counts(await scrape(api.url), teams)).toEqual([teamMisses + 1, teamHits + 1]);
  });

  test("prom-client's default process metrics are served too", async () => {
    const names = new Set((await scrape(api.url)).map((sample) => sample.name));
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(names).toContain(name);
  });

  test('no label value holds a tenant id, a tenant slug, a user id or any uuid', async () => {
    await callApi(api, admin.token, 'GET', `/admin/api-keys/${admin.userId}/revoke`);
    const values = (await scrape(api.url)).flatMap((sample) => Object.values(sample.labels));
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) {
      expect(value).not.toMatch(UUID);
      expect(value).not.toContain(`metrics-${run}`);
    }
  });

  test('/metrics is not part of the /api/v1 OpenAPI document', async () => {
    const doc = await jsonOf(await fetch(`${api.url}/api/v1/openapi.json`));
    expect(Object.keys(doc.paths).some((path) => path.endsWith('/metrics'))).toBe(false);
  });
});

describe('GET /metrics with SHIPYARD_METRICS_TOKEN', () => {
  const token = `metrics-token-${randomUUID()}`;
  let api: TestApi;
  beforeAll(async () => {
    const config = testConfig();
    api = await startApi({ deps: await testDeps({ ...config, metrics: { ...config.metrics, token } }) });
  });
  afterAll(() => api.close());

  test('without the token, or with another, it is the one 401 envelope', async () => {
    for (const headers of [{}, bearer('wrong-token-0123456789'), bearer(`${token}x`), { authorization: token }]) {
      const res = await fetch(`${api.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect((await jsonOf(res)).error).toEqual(
        expect.objectContaining({ code: 'UNAUTHORIZED', message: 'Authentication required' }),
      );
    }
  });

  test('with the right bearer token it is served', async () => {
    const samples = await scrape(api.url, bearer(token));
    expect(samples.some((sample) => sample.name === 'shipyard_http_requests_total')).toBe(true);
  });
});

describe('GET /metrics with SHIPYARD_METRICS_PORT', () => {
  let api: TestApi;
  let metrics: Server;
  let metricsUrl: string;
  beforeAll(async () => {
    const config = testConfig();
    // The port only needs to be set for the main app to drop /metrics; the test binds port 0.
    const deps = await testDeps({ ...config, metrics: { ...config.metrics, port: 1 } });
    api = await startApi({ deps });
    metrics = createServer(buildMetricsApp(deps).callback());
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
    metricsUrl = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    metrics.closeAllConnections();
    await new Promise((resolve) => metrics.close(resolve));
    await api.close();
  });

  test('the metrics listener serves /metrics, with the pool gauges of the API it belongs to', async () => {
    const samples = await scrape(metricsUrl);
    expect(valueOf(samples, 'shipyard_db_pool_max', { pool: 'app' })).toBe(api.deps.config.database.poolMax);
  });

  test('the main port answers 404 for /metrics, and the metrics listener 404 for anything else', async () => {
    const main = await fetch(`${api.url}/metrics`);
    expect(main.status).toBe(404);
    expect((await jsonOf(main)).error.code).toBe('NOT_FOUND');
    const other = await fetch(`${metricsUrl}/api/v1/system`);
    expect(other.status).toBe(404);
    expect((await jsonOf(other)).error.code).toBe('NOT_FOUND');
  });
});

describe('log lines dropped', () => {
  let api: TestApi;
  // Room for about one line while a write is in flight: the lines after it are dropped.
  let dropped = 0;
  beforeAll(async () => {
    const destination = pino.destination({ dest: openSync('/dev/null', 'w'), sync: false, maxLength: 300 });
    destination.on('drop', () => dropped++);
    api = await startApi({
      deps: await createDeps(testConfig(), createLogger({ logLevel: 'info' }, 'api', destination)),
    });
  });
  afterAll(() => api.close());

  test('are counted as the destination drops them', async () => {
    for (let i = 0; i < 3; i++) api.deps.logger.info({ i, pad: 'x'.repeat(200) }, 'a line that will not fit');
    expect(dropped).toBeGreaterThanOrEqual(1);
    // The scrape's own closing line is written after its body is made.
    expect(valueOf(await scrape(api.url), 'shipyard_log_lines_dropped_total')).toBe(dropped);
  });
});

describe('worker metrics (SHIPYARD_WORKER_METRICS_ADDRESS)', () => {
  let worker: ChildProcess | undefined;
  afterAll(async () => {
    if (worker) await stop(worker, 'SIGKILL');
  });

  test("a worker process serves the Temporal SDK's temporal_* metrics in Prometheus format on its address", async () => {
    const port = await freePort();
    worker = launch('workers/main.ts', ['forge'], { SHIPYARD_WORKER_METRICS_ADDRESS: `127.0.0.1:${port}` });
    const text = await until('worker metrics', 120, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const body = await res.text();
      return res.status === 200 && /^temporal_/m.test(body) ? body : undefined;
    });
    const names = new Set(parseMetrics(text).map((sample) => sample.name));
    expect([...names].some((name) => name.startsWith('temporal_'))).toBe(true);
  }, 150_000);
});
