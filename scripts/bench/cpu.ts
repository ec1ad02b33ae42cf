import { readdirSync, readFileSync } from 'node:fs';

// CPU time per process for the benchmarks, read from Linux's scheduler statistics: the
// nanoseconds each thread has run (/proc/<pid>/task/<tid>/schedstat), where /proc/<pid>/stat
// counts in 10 ms ticks, too coarse for a round of a few hundred milliseconds.

/** Nanoseconds a thread has run; 0 once it is gone. */
const threadNs = (path: string) => {
  try {
    return Number(readFileSync(path, 'utf8').split(' ', 1)[0]);
  } catch {
    return 0;
  }
};

/** Nanoseconds the live threads of `pid` have run. */
export function processCpuNs(pid: number): number {
  let total = 0;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of threads) total += threadNs(`/proc/${pid}/task/${tid}/schedstat`);
  return total;
}

/** Every PostgreSQL process (server, backends, background workers): pid → nanoseconds run. */
function postgresCpuNs(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8') !== 'postgres\n') continue;
    } catch {
      continue; // ended while we looked
    }
    byPid.set(pid, threadNs(`/proc/${pid}/schedstat`)); // PostgreSQL's processes have one thread
  }
  return byPid;
}

/** CPU time (µs) a measured stretch cost each party: the bench process, the server, PostgreSQL. */
export interface CpuSpent {
  driver: number;
  server: number;
  postgres: number;
}

/**
 * Starts metering: the returned function gives the CPU spent since, by the bench process (the
 * load driver, or the `pg` client of an in-process case), by `server` (its pid; none for an
 * in-process case) and by PostgreSQL. A backend that starts in between counts from zero; a
 * thread or backend that ends in between is not counted at all, which is why the servers and
 * pools keep theirs for the bench's length.
 */
export function meterCpu(server?: number): () => CpuSpent {
  const driver = process.cpuUsage();
  const serverNs = server === undefined ? 0 : processCpuNs(server);
  const postgres = postgresCpuNs();
  return () => {
    const { user, system } = process.cpuUsage(driver);
    let postgresNs = 0;
    for (const [pid, ns] of postgresCpuNs()) postgresNs += ns - (postgres.get(pid) ?? 0);
    return {
      driver: user + system,
      server: server === undefined ? 0 : (processCpuNs(server) - serverNs) / 1000,
      postgres: postgresNs / 1000,
    };
  };
}
