import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../test/support/processes';
import { meterCpu, type CpuSpent } from './cpu';

// What the HTTP benchmarks share: a closed-loop load driver, kept-alive GETs, and child
// processes for the API and the floors (so each has its own CPU profile and RSS). Our own driver
// rather than a load generator such as autocannon: the floors it runs beside ours are not all
// HTTP (a raw `pg` transaction), and every case must take turns in the same rounds.

export const ROOT = path.join(__dirname, '..', '..');

/** Requests per measured pass and concurrent keep-alive clients, from the environment. */
export const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
/**
 * Seconds of load per case of bench:http and bench:ab (BENCH_SECONDS): time, not a count, since
 * the cases differ 5× in speed.
 */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/**
 * Seconds of load that warm each case up before any is measured (BENCH_WARMUP_SECONDS). A fresh
 * API serves a cached-key read at a third of its steady rate and takes ~4 s of load (~10,000
 * requests) to reach it, while V8 optimizes the path; bare Koa and /healthz take under a second.
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);

export interface Figures {
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p95: number;
  p99: number;
  /** CPU per request (µs) by party, when `measureSideBySide` was told who serves the case. */
  cpu?: CpuSpent;
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** What one pass of a case runs: until `requests` are done or `seconds` have passed (either may be Infinity). */
interface Pass {
  requests: number;
  seconds: number;
  concurrency: number;
}

/** Runs `once` from `concurrency` loops for a pass: each latency (ms) and the time it took (s). */
async function drive(once: () => Promise<void>, { requests, seconds, concurrency }: Pass) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (next++ < requests && performance.now() < deadline) {
      const before = performance.now();
      await once();
      latencies.push(performance.now() - before);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

/** Rounds `measureSideBySide` splits each case's requests into. */
const ROUNDS = 8;

/**
 * Measures several cases (ours beside its floor) after a warm-up pass of each (JIT, pools,
 * caches). Each case's requests are split into rounds that take turns, so the drift of a noisy
 * machine falls on every case alike, not on whichever ran during a slow minute. With one client
 * the latencies are a request's own (nothing queues); with CONCURRENCY the machine is saturated.
 *
 * With `seconds`, each case runs for that long instead of for `requests`: cases that differ
 * several times in speed then get the same exposure to the machine's noise. (With an equal count,
 * bare Koa's rounds lasted ~30 ms, and one pause of the driver moved its figure by a fifth.)
 * Each case's warm-up is as many requests as it measures, a quarter of its `seconds`, or
 * `warmupSeconds` of load when given.
 *
 * With `servers` (the pid serving each case, undefined for a case run in this process), each
 * case's figures also give the CPU a request cost the load driver, its server and PostgreSQL
 * (cpu.ts), metered round by round like the requests.
 */
export async function measureSideBySide(
  cases: (() => Promise<void>)[],
  {
    requests = REQUESTS,
    concurrency = CONCURRENCY,
    seconds,
    warmupSeconds,
    servers,
  }: {
    requests?: number;
    concurrency?: number;
    seconds?: number;
    warmupSeconds?: number;
    servers?: (number | undefined)[];
  } = {},
): Promise<Figures[]> {
  // Counted by requests, or by time: not both.
  const whole = seconds === undefined ? { requests, seconds: Infinity } : { requests: Infinity, seconds };
  const warmup =
    warmupSeconds === undefined
      ? { requests: whole.requests, seconds: whole.seconds / 4, concurrency }
      : { requests: Infinity, seconds: warmupSeconds, concurrency };
  for (const once of cases) await drive(once, warmup);
  const round = { requests: Math.ceil(whole.requests / ROUNDS), seconds: whole.seconds / ROUNDS, concurrency };
  const runs = cases.map(() => ({
    latencies: [] as number[],
    seconds: 0,
    cpu: { driver: 0, server: 0, postgres: 0 } as CpuSpent,
  }));
  for (let i = 0; i < ROUNDS; i++) {
    // Each round starts one case later: whatever a case leaves running behind it (a server's
    // collection, its log flush) falls on the next case, and this way not always on the same one.
    for (let turn = 0; turn < cases.length; turn++) {
      const c = (i + turn) % cases.length;
      const meter = servers && meterCpu(servers[c]);
      const { latencies, seconds: took } = await drive(cases[c], round);
      runs[c].latencies.push(...latencies);
      runs[c].seconds += took;
      if (meter) {
        const { driver, server, postgres } = meter();
        const cpu = runs[c].cpu;
        cpu.driver += driver;
        cpu.server += server;
        cpu.postgres += postgres;
      }
    }
  }
  return runs.map(({ latencies, seconds: took, cpu }) => {
    latencies.sort((a, b) => a - b);
    const perRequest = (us: number) => us / latencies.length;
    return {
      rps: latencies.length / took,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      ...(servers && {
        cpu: { driver: perRequest(cpu.driver), server: perRequest(cpu.server), postgres: perRequest(cpu.postgres) },
      }),
    };
  });
}

/** One case alone (`measureSideBySide` of one). */
export async function measure(once: () => Promise<void>, options?: { requests?: number; concurrency?: number }) {
  const [figures] = await measureSideBySide([once], options);
  return figures;
}

/**
 * A kept-alive HTTP/1.1 connection of the load driver: one GET at a time, the body read by its
 * Content-Length. The driver shares the machine's two cores with the server under test, and
 * node:http's client spent ~0.2 ms of CPU per request there, about half the API's own; this one
 * spends less than half of that, so the figures say more about the server and less about us.
 */
class LoadConnection {
  private readonly socket: Socket;
  private received: Buffer = Buffer.alloc(0);
  private waiting?: { url: string; resolve: () => void; reject: (err: Error) => void };

  constructor(
    readonly origin: URL,
    private readonly onGone: (connection: LoadConnection) => void,
  ) {
    this.socket = connect(Number(origin.port), origin.hostname);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    const gone = (err?: Error) => {
      this.onGone(this);
      this.settle(err ?? new Error(`${origin.origin} closed the connection`));
    };
    this.socket.on('error', gone);
    this.socket.on('close', () => gone());
  }

  get(url: URL, headers: Record<string, string>): Promise<void> {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    return new Promise((resolve, reject) => {
      this.waiting = { url: url.href, resolve, reject };
      this.socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${lines.join('')}\r\n`);
    });
  }

  private read(chunk: Buffer): void {
    this.received = this.received.length ? Buffer.concat([this.received, chunk]) : chunk;
    const headEnd = this.received.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.received.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return this.settle(new Error(`${this.waiting?.url}: the load client needs a Content-Length`));
    const end = headEnd + 4 + Number(length[1]);
    if (this.received.length < end) return;
    this.received = this.received.subarray(end);
    const status = head.slice(9, 12);
    this.settle(status === '200' ? undefined : new Error(`${this.waiting?.url} answered ${status}`));
  }

  private settle(err?: Error): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (err) waiting?.reject(err);
    else waiting?.resolve();
  }
}

/** Idle kept-alive connections by origin; a request with none idle opens one. */
const idle = new Map<string, LoadConnection[]>();
const dropped = (connection: LoadConnection) => {
  const list = idle.get(connection.origin.origin);
  if (list?.includes(connection)) list.splice(list.indexOf(connection), 1);
};

/** One GET on a kept-alive socket; anything but 200 stops the bench. */
export async function get(url: string, headers: Record<string, string>): Promise<void> {
  const target = new URL(url);
  let list = idle.get(target.origin);
  if (!list) idle.set(target.origin, (list = []));
  const connection = list.pop() ?? new LoadConnection(target, dropped);
  await connection.get(target, headers);
  list.push(connection);
}

/** This checkout's compiled build, which the bench npm scripts make first. */
export const DIST = path.join(ROOT, 'dist');

/**
 * Starts a module of a compiled build (what the image runs: no TypeScript loader in the
 * process), this checkout's unless `dist` names another, and waits until `ready` resolves to
 * its base URL. `entry` is the source path without extension, e.g. `api/server`.
 */
export async function child(
  entry: string,
  env: Record<string, string>,
  ready: (proc: ChildProcess) => Promise<string>,
  dist = DIST,
): Promise<{ proc: ChildProcess; base: string }> {
  const compiled = path.join(dist, `${entry}.js`);
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npm run build\` first`);
  const proc = spawn(process.execPath, [compiled], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await ready(proc);
  return { proc, base };
}

/** The first line a child prints (the floors print their port). */
export const firstLine = (proc: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    proc.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    proc.once('exit', (code) => reject(new Error(`exited with ${code} before it listened`)));
  });

export async function untilUp(url: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      await get(url, {});
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

/**
 * The API as deployed (from `dist`, this checkout's build by default), in a child process on a
 * free port with default logging (to a pipe nobody reads but drains); resolves once /healthz
 * answers.
 */
/**
 * The environment of an API whose load comes from one tenant's clients: its per-tenant share of
 * the process (requests per second and in progress) lifted, so a benchmark measures the request
 * path and not that share. bench:fairness, which measures the share, runs the API as deployed.
 */
export const ONE_TENANT_LOAD: Record<string, string> = {
  SHIPYARD_TENANT_REQUESTS_PER_SECOND: '1000000',
  SHIPYARD_TENANT_CONCURRENT_REQUESTS: '64',
};

export async function startApiProcess(
  dist = DIST,
  env: Record<string, string> = {},
): Promise<{ proc: ChildProcess; base: string }> {
  const port = await freePort();
  const api = await child(
    'api/server',
    // The young generation the image gives the API (docs/operations.md, "The API's memory").
    { NODE_OPTIONS: '--max-semi-space-size=16', ...env, PORT: String(port), HOST: '127.0.0.1' },
    async () => {
      const base = `http://127.0.0.1:${port}`;
      await untilUp(`${base}/healthz`);
      return base;
    },
    dist,
  );
  api.proc.stdout!.resume();
  return api;
}

export const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/**
 * A table of cases measured beside their floor: latency with one client (p50 / p95 and their
 * ratios) and throughput under load (req/s and its ratio). `header` names the first column.
 */
export function sideBySideTable(header: string, width: number) {
  const ms = (f: Figures) => `${f.p50.toFixed(2)} / ${f.p95.toFixed(2)}`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  return {
    header: [
      header.padEnd(width),
      'ours p50/p95 ms'.padStart(15),
      'floor p50/p95'.padStart(15),
      'p50 ×'.padStart(6),
      'p95 ×'.padStart(6),
      'ours/s'.padStart(7),
      'floor/s'.padStart(8),
      'req/s ×'.padStart(7),
    ].join(' '),
    row: (name: string, ours: Figures, floor: Figures, oursLoaded: Figures, floorLoaded: Figures) =>
      [
        name.padEnd(width),
        ms(ours).padStart(15),
        ms(floor).padStart(15),
        ratio(ours.p50, floor.p50).padStart(6),
        ratio(ours.p95, floor.p95).padStart(6),
        oursLoaded.rps.toFixed(0).padStart(7),
        floorLoaded.rps.toFixed(0).padStart(8),
        ratio(oursLoaded.rps, floorLoaded.rps).padStart(7),
      ].join(' '),
  };
}
