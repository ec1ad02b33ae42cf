import type { ChildProcess } from 'node:child_process';
import { Pool } from 'pg';
import { loadConfig } from '../../core/config';
import { benchCaller } from './benchCaller';
import {
  child,
  CONCURRENCY,
  firstLine,
  get,
  measureSideBySide,
  ONE_TENANT_LOAD,
  rssMb,
  SECONDS,
  startApiProcess,
  WARMUP_SECONDS,
  type Figures,
} from './load';

// `npm run bench:http`: the request path against its floor, in one run. CONCURRENCY keep-alive
// clients load each case for SECONDS (after WARMUP_SECONDS of warm-up) against one API process
// (a child, so its RSS is its own):
//   raw `pg` tenant transaction   vs  GET /api/v1/roles with a cached API key, and with a session token
// The raw transaction is what a tenant-scoped read costs at the least: BEGIN, set_config, the
// query, COMMIT, through `pg` with CONCURRENCY connections; it is measured twice, and the second
// is the run's noise row. For reference, a bare Koa app in a process of its own serves the same
// transaction: the share HTTP itself takes on this machine. The cases take turns in rounds
// (measureSideBySide), so a slow minute falls on all of them. Each case also prints the CPU a
// request cost its server, PostgreSQL and the load driver (the bench process).

/** CPU a request cost all parties (µs): what the two cores are shared out by. */
const totalCpu = (f: Figures) => f.cpu!.server + f.cpu!.postgres + f.cpu!.driver;
const cpuCell = (us: number) => us.toFixed(0).padStart(7);

/**
 * A goal, its figure to three places and whether it holds; a figure short of its goal by no more
 * than the run's noise (how far two identical cases read apart) counts as met.
 */
const goal = (name: string, figure: number, holds: (figure: number) => boolean) =>
  `${name}: ${figure.toFixed(3)} ${holds(figure) ? 'met' : 'NOT MET'}`;

const row = (name: string, f: Figures, floor?: Figures) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)}` +
  `${cpuCell(f.cpu!.server)}${cpuCell(f.cpu!.postgres)}${cpuCell(f.cpu!.driver)}${cpuCell(totalCpu(f))}` +
  (floor ? `   ${(f.rps / floor.rps).toFixed(2)}× floor req/s` : '');

async function main(): Promise<void> {
  const config = loadConfig();
  // One tenant's 8 clients measure the request path, not that tenant's share of the process.
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: CONCURRENCY });
  let revokeKey = async () => {};
  const floorProcesses: ChildProcess[] = [];
  try {
    const caller = await benchCaller(config, api.base);
    const { tenantId, session, apiKey } = caller;
    revokeKey = caller.revokeKey;
    const koaWithTransaction = await child(
      'scripts/bench/bareKoa',
      { BENCH_DATABASE_URL: config.database.appUrl, BENCH_TENANT_ID: tenantId },
      async (proc) => `http://127.0.0.1:${await firstLine(proc)}`,
    );
    floorProcesses.push(koaWithTransaction.proc);

    const transaction = async (query: string) => {
      const client = await pg.connect();
      try {
        await client.query('begin');
        await client.query("select set_config('app.tenant_id', $1, true)", [tenantId]);
        await client.query(query);
        await client.query('commit');
      } finally {
        client.release();
      }
    };
    const rolesQuery = 'select id, name from role_bundles order by name limit 21';
    // Each case with the process that serves it, whose CPU its rows show (none: this process).
    const servedBy = (server: { proc: ChildProcess } | undefined, once: () => Promise<void>) => ({
      once,
      server: server?.proc.pid,
    });
    const cases = [
      servedBy(undefined, () => transaction(rolesQuery)),
      servedBy(undefined, () => transaction(rolesQuery)),
      servedBy(koaWithTransaction, () => get(`${koaWithTransaction.base}/tenant-read`, {})),
      servedBy(api, () => get(`${api.base}/api/v1/roles`, apiKey)),
      servedBy(api, () => get(`${api.base}/api/v1/roles`, session)),
    ];
    const [rawTransaction, rawTransactionAgain, koaTransaction, withApiKey, withSession] = await measureSideBySide(
      cases.map((c) => c.once),
      { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, servers: cases.map((c) => c.server) },
    );

    console.log(
      `bench:http — ${SECONDS} s per case in rounds taking turns after ${WARMUP_SECONDS} s of warm-up each, ` +
        `${CONCURRENCY} keep-alive clients, one API process`,
    );
    console.log(`${' '.repeat(60)}CPU µs a request: server, PostgreSQL, driver, all`);
    console.log(
      `${'case'.padEnd(34)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}` +
        ['server', 'pg', 'driver', 'all'].map((party) => party.padStart(7)).join(''),
    );
    console.log(row('raw pg tenant transaction (floor)', rawTransaction));
    console.log(row('raw pg, measured again (noise)', rawTransactionAgain, rawTransaction));
    console.log(row('bare Koa + that transaction', koaTransaction, rawTransaction));
    console.log(row('ours: GET /roles, cached API key', withApiKey, rawTransaction));
    console.log(row('ours: GET /roles, session token', withSession, rawTransaction));
    console.log(
      `GET /roles with a cached API key / bare Koa + the transaction: ${(withApiKey.rps / koaTransaction.rps).toFixed(2)}× req/s`,
    );
    // The two cores are shared by every party, so the floor's CPU a request over ours is the
    // ratio a machine that only ran out of CPU would show.
    const cpuBound = (ours: Figures, floor: Figures) => `${(totalCpu(floor) / totalCpu(ours)).toFixed(2)}×`;
    console.log(
      `by CPU alone (the floor's CPU a request / ours): the cached key ${cpuBound(withApiKey, rawTransaction)} of the raw transaction`,
    );
    const rss = rssMb(api.proc.pid!);
    const noise = Math.abs(1 - rawTransactionAgain.rps / rawTransaction.rps);
    console.log(
      `session token p50 / API key p50: ${(withSession.p50 / withApiKey.p50).toFixed(2)}×` +
        `   API RSS after the run: ${rss.toFixed(0)} MB`,
    );
    console.log(
      [
        goal('cached key / raw transaction ≥ 0.5', withApiKey.rps / rawTransaction.rps, (x) => x >= 0.5 - noise),
        goal('session p50 / key p50 ≤ 1.2', withSession.p50 / withApiKey.p50, (x) => x <= 1.2),
        `RSS < 250 MB ${rss < 250 ? 'met' : 'NOT MET'}`,
      ].join('; '),
    );
  } finally {
    await revokeKey();
    await pg.end();
    for (const floor of floorProcesses) floor.kill();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
