import type { Metric } from 'prom-client';

/** What no route matched (including a method a path does not serve): one label value. */
export const UNMATCHED = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Upper bounds of the duration buckets, in seconds. */
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Labels {
  route: string;
  method: string;
  status: string;
}

/** One route, method and status: its request count, total seconds and per-bucket counts. */
interface Series {
  labels: Labels;
  count: number;
  seconds: number;
  /** Requests that fell in each bucket alone; the last slot is above the largest bound. */
  inBucket: number[];
}

/**
 * The requests this process answered, by route template, method and status, kept as plain
 * numbers and handed to prom-client's registry as a counter and a histogram when scraped.
 * prom-client's own Counter and Histogram validate and hash their labels on every increment
 * and observation: ~1 µs a request, where this costs a few Map lookups and additions.
 */
class RequestSeries {
  /** route → method → status: each series is found by lookups, with no key built per request. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();

  record(route: string | undefined, method: string, status: number, seconds: number): void {
    const series = this.seriesOf(route ?? UNMATCHED, METHODS.has(method) ? method : 'OTHER', status);
    let bucket = 0;
    while (bucket < BOUNDS.length && seconds > BOUNDS[bucket]) bucket++;
    series.inBucket[bucket]++;
    series.count++;
    series.seconds += seconds;
  }

  all(): Series[] {
    return [...this.byRoute.values()].flatMap((byMethod) => [...byMethod.values()].flatMap((s) => [...s.values()]));
  }

  clear(): void {
    this.byRoute.clear();
  }

  private seriesOf(route: string, method: string, status: number): Series {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const labels = { route, method, status: String(status) };
      byStatus.set(status, (series = { labels, count: 0, seconds: 0, inBucket: BOUNDS.map(() => 0).concat(0) }));
    }
    return series;
  }
}

const requests = new RequestSeries();

/**
 * Counts and times one answered request. `route` is the template that answered it
 * (`/api/v1/forge/runs/{runId}`, `/healthz`), undefined when none did; any method outside the
 * standard ones counts as `OTHER`, so neither a URL nor a client can add series.
 */
export const recordRequest = requests.record.bind(requests);

type Sample = { value: number; labels: Record<string, string>; metricName?: string };

/**
 * A metric whose samples are computed when scraped, in the shape prom-client's Registry reads
 * from its own metrics (name, help, type, aggregator and `get()`).
 */
function scrapedMetric(name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[]): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset: () => requests.clear(),
  };
  // prom-client types its registry for its own classes; at run time it reads only the above.
  return metric as unknown as Metric;
}

export const httpRequests = scrapedMetric(
  'shipyard_http_requests_total',
  'HTTP requests answered, by route template (unmatched: no route), method and status',
  'counter',
  () => requests.all().map(({ labels, count }) => ({ labels: { ...labels }, value: count })),
);

export const httpRequestDuration = scrapedMetric(
  'shipyard_http_request_duration_seconds',
  'Time from the request reaching the app to its response being ready, by route template, method and status',
  'histogram',
  () =>
    requests.all().flatMap(({ labels, count, seconds, inBucket }) => {
      let cumulative = 0;
      const buckets = BOUNDS.map((bound, i) => ({
        metricName: 'shipyard_http_request_duration_seconds_bucket',
        labels: { ...labels, le: String(bound) },
        value: (cumulative += inBucket[i]),
      }));
      return [
        ...buckets,
        {
          metricName: 'shipyard_http_request_duration_seconds_bucket',
          labels: { ...labels, le: '+Inf' },
          value: count,
        },
        { metricName: 'shipyard_http_request_duration_seconds_sum', labels: { ...labels }, value: seconds },
        { metricName: 'shipyard_http_request_duration_seconds_count', labels: { ...labels }, value: count },
      ];
    }),
);
