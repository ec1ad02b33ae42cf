import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../core/config';
import { bodyText, HOSTILE_REQUESTS } from '../../test/support/hostileBodies';
import { issueDevToken } from '../cli/devToken';
import { setForgeLimits } from '../cli/forgeLimits';
import { benchApi, RawText, type BenchApi } from './apiClient';
import { ENTITIES, ensureCatalog, TENANT as FLOODER_TENANT } from './catalogTenant';
import { child, percentile, startApiProcess } from './load';

// `npm run bench:fairness`: what one tenant's flood does to another tenant. The victim (its own
// tenant) times a simple request (GET /entities?limit=1) and a simple run (one `echo hi` script
// step, POST /forge/runs until its log stream ends) while the flooder, the seeded catalog tenant,
// floods in one way at a time. The floor is the victim's own figure with nobody flooding, measured
// first and again last (the second idle row is the run's noise). Goal: the victim within 2× of idle
// under every flood, and no 5xx for the victim; the flooder's answers are counted by status (its
// 429s and 503s with Retry-After are the limits at work). API and workers run as deployed, each in
// its own process from the compiled build.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS_PER_ROUND = Number(process.env.BENCH_REQUESTS_PER_ROUND ?? 10);
const SLOW_RUNS = 100;
const HEAVY_READERS = 100;
const HOSTILE_SENDERS = 4;
/** The flood gets this long to take hold before the victim measures. */
const SETTLE_MS = 2_000;
const GOAL = 2;

interface Tally {
  /** Answers by status code. */
  statuses: Map<number, number>;
  /** 5xx answers without a Retry-After (a limit answers 503 with one). */
  unexplained5xx: number;
}
const newTally = (): Tally => ({ statuses: new Map(), unexplained5xx: 0 });
function count(tally: Tally, status: number, retryAfter?: string | string[]): void {
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  if (status >= 500 && !(status === 503 && retryAfter)) tally.unexplained5xx += 1;
}
const statusText = (tally: Tally) =>
  [...tally.statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');

/** Sends a request and tallies its answer, draining the body. */
async function tallied(api: BenchApi, tally: Tally, method: string, path: string, body?: unknown): Promise<void> {
  try {
    const res = await api.send(method, path, body);
    res.resume();
    await new Promise((resolve) => res.on('end', resolve).on('error', resolve));
    count(tally, res.statusCode!, res.headers['retry-after']);
  } catch {
    count(tally, 0); // no answer at all (timeout, reset): shown as status 0
  }
}

interface Flood {
  name: string;
  /** Starts the flood; resolves once it is under way. */
  start(flooder: BenchApi, tally: Tally): Promise<void>;
  /** Stops it and leaves nothing running. */
  stop(flooder: BenchApi): Promise<void>;
}

/** Loops that repeat `once` until stopped. */
function loops(n: number, once: () => Promise<void>) {
  let running = true;
  const done = Promise.all(
    Array.from({ length: n }, async () => {
      while (running) await once();
    }),
  );
  return async () => {
    running = false;
    await done;
  };
}

function slowRuns(moldSlug: string): Flood {
  const started: string[] = [];
  return {
    name: `slow runs (${SLOW_RUNS} × sleep 60)`,
    async start(flooder, tally) {
      await Promise.all(
        Array.from({ length: SLOW_RUNS }, async () => {
          const { status, text } = await flooder.answer('POST', '/forge/runs', { mold_slug: moldSlug, parameters: {} });
          count(tally, status);
          if (status === 201) started.push((JSON.parse(text) as { id: string }).id);
        }),
      );
    },
    async stop(flooder) {
      await Promise.all(started.map((id) => flooder.answer('POST', `/forge/runs/${id}/cancel`, {})));
      started.length = 0;
    },
  };
}

function repeated(name: string, senders: number, request: (flooder: BenchApi, tally: Tally) => Promise<void>): Flood {
  let stopLoops: (() => Promise<void>) | undefined;
  return {
    name,
    async start(flooder, tally) {
      stopLoops = loops(senders, () => request(flooder, tally));
    },
    async stop() {
      await stopLoops?.();
    },
  };
}

const heavyReads = repeated(`heavy reads (${HEAVY_READERS} concurrent /stats/languages)`, HEAVY_READERS, (api, tally) =>
  tallied(api, tally, 'GET', '/stats/languages'),
);

let hostileTurn = 0;
const hostileBodies = repeated(`hostile bodies (${HOSTILE_SENDERS} senders)`, HOSTILE_SENDERS, (api, tally) => {
  const hostile = HOSTILE_REQUESTS[hostileTurn++ % HOSTILE_REQUESTS.length];
  return tallied(api, tally, hostile.method, hostile.path, new RawText(bodyText(hostile)));
});

interface VictimFigures {
  requestMs: number[];
  runMs: number[];
  tally: Tally;
}

/** The victim's rounds: REQUESTS_PER_ROUND simple requests and one simple run each. */
async function measureVictim(victim: BenchApi, moldSlug: string): Promise<VictimFigures> {
  const figures: VictimFigures = { requestMs: [], runMs: [], tally: newTally() };
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < REQUESTS_PER_ROUND; i++) {
      const before = performance.now();
      await tallied(victim, figures.tally, 'GET', '/entities?limit=1');
      figures.requestMs.push(performance.now() - before);
    }
    const before = performance.now();
    const { status, text } = await victim.answer('POST', '/forge/runs', { mold_slug: moldSlug, parameters: {} });
    count(figures.tally, status);
    if (status === 201) {
      const ended = await victim.streamedEnd((JSON.parse(text) as { id: string }).id);
      if (ended === 'completed') figures.runMs.push(performance.now() - before);
      else count(figures.tally, 0);
    }
  }
  return figures;
}

const median = (values: number[]) =>
  values.length
    ? percentile(
        [...values].sort((a, b) => a - b),
        50,
      )
    : NaN;

async function workersProcess(): Promise<ChildProcess> {
  const { proc } = await child('workers/main', {}, (proc) => {
    return new Promise((resolve, reject) => {
      let seen = '';
      proc.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('workers running')) resolve('');
      });
      proc.once('exit', (code) => reject(new Error(`the workers exited with ${code} before they ran`)));
    });
  });
  return proc;
}

async function main(): Promise<void> {
  const config = loadConfig();
  await ensureCatalog(config);
  const api = await startApiProcess();
  const workers = await workersProcess();
  try {
    const base = `${api.base}/api/v1`;
    const as = async (tenant: string) =>
      benchApi(base, (await issueDevToken(config, { tenant, email: 'bench@bench.test', roles: ['admin'] })).token);
    const victim = await as('bench-fair-victim');
    // The victim starts more runs than a tenant's default a minute: its own limit is not under test.
    await setForgeLimits(config, { tenant: 'bench-fair-victim', override: { runStartsPerMinute: 10_000 } });
    const flooder = await as(FLOODER_TENANT);
    const stamp = Date.now();
    const mold = async (who: BenchApi, slug: string, script: string) => {
      await who.call('POST', '/forge/molds', {
        slug,
        name: `bench: ${script}`,
        actions: [{ name: 'step', type: 'script', config: { script, timeout_seconds: 120 } }],
      });
      return slug;
    };
    const quickMold = await mold(victim, `bench-fair-quick-${stamp}`, 'echo hi');
    const slowMold = await mold(flooder, `bench-fair-slow-${stamp}`, 'sleep 60');

    // Warm-up: JIT, pools, caches, the sandbox's first start.
    for (let pass = 0; pass < 2; pass++) await measureVictim(victim, quickMold);
    const rows: { name: string; figures: VictimFigures; flooder?: Tally }[] = [];
    rows.push({ name: 'idle', figures: await measureVictim(victim, quickMold) });
    for (const flood of [slowRuns(slowMold), heavyReads, hostileBodies]) {
      const tally = newTally();
      await flood.start(flooder, tally);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const figures = await measureVictim(victim, quickMold);
      await flood.stop(flooder);
      rows.push({ name: flood.name, figures, flooder: tally });
    }
    rows.push({ name: 'idle again (noise)', figures: await measureVictim(victim, quickMold) });

    const idle = rows[0].figures;
    const idleRequest = median(idle.requestMs);
    const idleRun = median(idle.runMs);
    console.log(
      `fairness: the victim's simple request (GET /entities?limit=1) and simple run (echo hi) while ${FLOODER_TENANT} (${ENTITIES} entities) floods; ${ROUNDS} rounds of ${REQUESTS_PER_ROUND} requests and 1 run each, medians`,
    );
    console.log(
      `${'flood'.padEnd(44)} ${'req ms'.padStart(7)} ${'× idle'.padStart(7)} ${'run ms'.padStart(7)} ${'× idle'.padStart(7)}  victim answers / flooder answers`,
    );
    let met = true;
    for (const [i, { name, figures, flooder: floodTally }] of rows.entries()) {
      const request = median(figures.requestMs);
      const run = median(figures.runMs);
      const flood = i > 0 && i < rows.length - 1;
      if (flood && (request / idleRequest > GOAL || !(run / idleRun <= GOAL) || figures.tally.unexplained5xx > 0)) {
        met = false;
      }
      console.log(
        [
          name.padEnd(44),
          request.toFixed(1).padStart(7),
          `${(request / idleRequest).toFixed(2)}×`.padStart(7),
          run.toFixed(0).padStart(7),
          `${(run / idleRun).toFixed(2)}×`.padStart(7),
          ` ${statusText(figures.tally)}${floodTally ? ` / ${statusText(floodTally)}` : ''}`,
        ].join(' '),
      );
      if (floodTally?.unexplained5xx) {
        met = false;
        console.log(`  the flooder got ${floodTally.unexplained5xx} 5xx without Retry-After`);
      }
    }
    console.log(
      `goal: the victim within ${GOAL}× of idle under every flood, no 5xx: ${met ? 'met' : 'NOT MET'} (noise row above: idle measured again)`,
    );
    await victim.call('DELETE', `/forge/molds/${quickMold}`).catch(() => undefined);
    await flooder.call('DELETE', `/forge/molds/${slowMold}`).catch(() => undefined);
  } finally {
    workers.kill('SIGTERM');
    api.proc.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
