import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { loadConfig } from '../../core/config';
import { issueDevToken } from '../cli/devToken';

// `npm run bench:http`: the request path against its floors, in one run. CONCURRENCY keep-alive
// clients send REQUESTS requests per case to one API process (a child, so its RSS is its own):
//   bare Koa (a child too)        vs  our public route (/healthz)
//   raw `pg` tenant transaction   vs  GET /api/v1/roles with a cached API key, and with a session token
// The raw transaction is what a tenant-scoped read costs at the least: BEGIN, set_config, the
// query, COMMIT, through `pg` with CONCURRENCY connections. A third floor serves that
// transaction from a bare Koa app in its own process: the share HTTP itself takes on this machine.
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

interface Figures {
  rps: number;
  p50: number;
  p99: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Runs `once` REQUESTS times from CONCURRENCY loops; latencies in ms. */
async function drive(once: () => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const loop = async () => {
    while (next++ < REQUESTS) {
      const started = performance.now();
      await once();
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: REQUESTS / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** One GET on a kept-alive socket; anything but 200 stops the bench. */
function get(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`${url} answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** A warm-up pass (JIT, pools, caches), then the measured one. */
async function measure(once: () => Promise<void>): Promise<Figures> {
  await drive(once);
  return drive(once);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Starts a TypeScript entry as a child process and waits until `ready` resolves. */
async function child(entry: string, env: Record<string, string>, ready: (proc: ChildProcess) => Promise<string>) {
  const proc = spawn(TSX, [path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await ready(proc);
  return { proc, base };
}

const firstLine = (proc: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    proc.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    proc.once('exit', (code) => reject(new Error(`exited with ${code} before it listened`)));
  });

async function untilUp(url: string): Promise<void> {
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

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const row = (name: string, f: Figures, floor?: Figures) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)}` +
  (floor ? `   ${(f.rps / floor.rps).toFixed(2)}× floor req/s` : '');

async function main(): Promise<void> {
  const config = loadConfig();
  const port = await freePort();
  // The API as deployed: its own process, default logging (to a pipe nobody reads but drains).
  const api = await child('api/server.ts', { PORT: String(port), HOST: '127.0.0.1' }, async () => {
    const base = `http://127.0.0.1:${port}`;
    await untilUp(`${base}/healthz`);
    return base;
  });
  api.proc.stdout!.resume();
  const pg = new Pool({ connectionString: config.database.appUrl, max: CONCURRENCY });
  let revokeKey = async () => {};
  let stopKoa = () => {};
  try {
    const { token, tenantId } = await issueDevToken(config, {
      tenant: 'bench',
      email: 'bench@bench.test',
      roles: ['admin'],
    });
    const session = { authorization: `Bearer ${token}` };
    const koa = await child(
      'scripts/bench/bareKoa.ts',
      { BENCH_DATABASE_URL: config.database.appUrl, BENCH_TENANT_ID: tenantId },
      async (proc) => `http://127.0.0.1:${await firstLine(proc)}`,
    );
    stopKoa = () => koa.proc.kill();
    const created = await fetch(`${api.base}/api/v1/admin/api-keys`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-http-${Date.now()}`, scopes: ['admin:read'] }),
    });
    if (created.status !== 201) throw new Error(`could not create the bench API key: ${created.status}`);
    const apiKey = (await created.json()) as { id: string; token: string };
    revokeKey = async () => {
      await fetch(`${api.base}/api/v1/admin/api-keys/${apiKey.id}`, { method: 'DELETE', headers: session });
    };

    const bareKoa = await measure(() => get(`${koa.base}/`, {}));
    const publicRoute = await measure(() => get(`${api.base}/healthz`, {}));
    const rawTransaction = await measure(async () => {
      const client = await pg.connect();
      try {
        await client.query('begin');
        await client.query("select set_config('app.tenant_id', $1, true)", [tenantId]);
        await client.query('select id, name from role_bundles order by name limit 21');
        await client.query('commit');
      } finally {
        client.release();
      }
    });
    const koaTransaction = await measure(() => get(`${koa.base}/tenant-read`, {}));
    const withApiKey = await measure(() =>
      get(`${api.base}/api/v1/roles`, { authorization: `Bearer ${apiKey.token}` }),
    );
    const withSession = await measure(() => get(`${api.base}/api/v1/roles`, session));

    console.log(`bench:http — ${REQUESTS} requests per case, ${CONCURRENCY} keep-alive clients, one API process`);
    console.log(`${'case'.padEnd(34)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
    console.log(row('bare Koa (floor)', bareKoa));
    console.log(row('ours: public route /healthz', publicRoute, bareKoa));
    console.log(row('raw pg tenant transaction (floor)', rawTransaction));
    console.log(row('bare Koa + that transaction', koaTransaction, rawTransaction));
    console.log(row('ours: GET /roles, cached API key', withApiKey, rawTransaction));
    console.log(row('ours: GET /roles, session token', withSession, rawTransaction));
    console.log(
      `GET /roles with a cached API key / bare Koa + the transaction: ${(withApiKey.rps / koaTransaction.rps).toFixed(2)}× req/s`,
    );
    console.log(
      `session token p50 / API key p50: ${(withSession.p50 / withApiKey.p50).toFixed(2)}×` +
        `   API RSS after the run: ${rssMb(api.proc.pid!).toFixed(0)} MB`,
    );
  } finally {
    await revokeKey();
    await pg.end();
    stopKoa();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
