import { loadConfig } from '../../core/config';
import { benchCaller } from './benchCaller';
import {
  get,
  measureSideBySide,
  percentile,
  SECONDS,
  ONE_TENANT_LOAD,
  startApiProcess,
  WARMUP_SECONDS,
  type Figures,
} from './load';

// `npm run bench:ab`: this checkout's API beside another build of it, to judge a change to the
// request path. bench:http reads each case against its floor within one run, but that ratio
// moves more from run to run than most changes move it, so two runs of two builds cannot tell
// them apart. Here both builds serve the same
// requests turn by turn in the same rounds (measureSideBySide), with a second process of this
// checkout's build beside them: how far two identical processes read apart in those rounds.
//   BENCH_AB_DIST    the other build: a `dist` folder compiled from the other revision, which
//                    must need the same migrations (say, `git worktree add ../base HEAD~1`, then
//                    `npm install --no-save && npm run build` there; its dist is ../base/dist)
//   BENCH_AB_PASSES  passes per route (default 6), each BENCH_SECONDS of load per process
const OTHER_DIST = process.env.BENCH_AB_DIST;
const PASSES = Number(process.env.BENCH_AB_PASSES ?? 6);

/** A ratio's median and range over the passes. */
function summarize(ratios: number[]): string {
  const sorted = [...ratios].sort((a, b) => a - b);
  const x = (n: number) => `${n.toFixed(2)}×`;
  return `median ${x(percentile(sorted, 50))} (${x(sorted[0])}–${x(sorted[sorted.length - 1])})`;
}

async function main(): Promise<void> {
  if (!OTHER_DIST) throw new Error('BENCH_AB_DIST must name the other build (a dist folder)');
  const config = loadConfig();
  const ours = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const oursAgain = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const other = await startApiProcess(OTHER_DIST, ONE_TENANT_LOAD);
  const apis = [ours, oursAgain, other];
  let revokeKey = async () => {};
  try {
    const caller = await benchCaller(config, ours.base);
    revokeKey = caller.revokeKey;
    const routes: [string, string, Record<string, string>][] = [
      ['/healthz', '/healthz', {}],
      ['GET /roles, cached API key', '/api/v1/roles', caller.apiKey],
      ['GET /roles, session token', '/api/v1/roles', caller.session],
    ];
    console.log(
      `bench:ab — this checkout's API (A), a second process of it (A'), and ${OTHER_DIST} (B), ` +
        `${PASSES} passes per route of ${SECONDS} s per process in rounds taking turns`,
    );
    const cell = (f: Figures) => `${f.rps.toFixed(0).padStart(6)}/s ${f.cpu!.server.toFixed(0).padStart(4)} µs`;
    for (const [name, path, headers] of routes) {
      console.log(`\n${name}: req/s and server CPU a request of A, A', B; then B / A (and A' / A, the noise)`);
      const noise: number[] = [];
      const change: number[] = [];
      const cpuChange: number[] = [];
      for (let pass = 0; pass < PASSES; pass++) {
        const [a, aAgain, b] = await measureSideBySide(
          apis.map((api) => () => get(`${api.base}${path}`, headers)),
          {
            seconds: SECONDS,
            warmupSeconds: pass === 0 ? WARMUP_SECONDS : SECONDS / 4,
            servers: apis.map((api) => api.proc.pid),
          },
        );
        noise.push(aAgain.rps / a.rps);
        change.push(b.rps / a.rps);
        cpuChange.push(b.cpu!.server / a.cpu!.server);
        console.log(
          `  pass ${pass + 1}: ${cell(a)}  ${cell(aAgain)}  ${cell(b)}   ` +
            `B/A ${change[pass].toFixed(2)}× req/s, ${cpuChange[pass].toFixed(2)}× CPU   A'/A ${noise[pass].toFixed(2)}×`,
        );
      }
      console.log(
        `  B / A: ${summarize(change)} req/s, ${summarize(cpuChange)} server CPU; A' / A: ${summarize(noise)} req/s`,
      );
    }
  } finally {
    await revokeKey();
    for (const api of apis) api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
