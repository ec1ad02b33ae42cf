import { randomUUID } from 'node:crypto';
import { access, constants, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxLimits } from './bubblewrap';

// Per-run cgroups (v2), where the host delegates a hierarchy with the cpu, memory and pids
// controllers to the worker: <worker's cgroup>/sandbox/<tenant>/<run>. A run's memory (its
// processes and its scratch tmpfs together), processes and CPU rate are then limits of the run,
// not of each process; tenants are siblings with equal CPU weight, so one tenant's many runs
// share what one run of another tenant gets; and the whole sandbox yields CPU to the worker.
// Elsewhere (cgroup v1 hosts, no delegation) the sandbox keeps to rlimits: see bubblewrap.ts.

const CONTROLLERS = ['cpu', 'memory', 'pids'];
/** cpu.weight of all scripts together, against the worker's 100: under contention they yield. */
const SANDBOX_CPU_WEIGHT = 10;
/** cpu.max of a run: at most one core's worth of time per period. */
const RUN_CPU_MAX = '100000 100000';

/** Where the per-run cgroups go, or why there are none. */
export type CgroupSupport = { parent: string } | { unavailable: string };

/**
 * The cgroup v2 directory this process is in, from /proc/self/mountinfo and /proc/self/cgroup,
 * or why there is none.
 */
export function ownCgroupDir(mountinfo: string, procCgroup: string): { dir: string } | { unavailable: string } {
  const mount = mountinfo
    .split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2');
  if (!mount) return { unavailable: 'no cgroup v2 hierarchy is mounted' };
  const [root, mountPoint] = [mount[3], mount[4]];
  const own = /^0::(.*)$/m.exec(procCgroup)?.[1];
  if (own === undefined) return { unavailable: 'this process is in no cgroup v2' };
  // Inside a cgroup namespace the mount's root is where our path starts.
  const relative = root !== '/' && own.startsWith(root) ? own.slice(root.length) : own;
  return { dir: path.resolve(path.join(mountPoint, relative)) };
}

/** The controllers of CONTROLLERS that `available` (a cgroup.controllers file) lacks. */
export const missingControllers = (available: string) =>
  CONTROLLERS.filter((name) => !available.trim().split(/\s+/).includes(name));

/** The files a run's cgroup is limited with. */
export function runCgroupLimits(limits: SandboxLimits): Record<string, string> {
  return {
    'memory.max': String(limits.memoryMb * 1024 * 1024),
    // No swap: memory over the budget ends the run instead of slowing the host.
    'memory.swap.max': '0',
    'pids.max': String(limits.maxProcesses),
    'cpu.max': RUN_CPU_MAX,
  };
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

const enable = (dir: string) =>
  writeFile(path.join(dir, 'cgroup.subtree_control'), CONTROLLERS.map((name) => `+${name}`).join(' '));

/**
 * Finds the worker's cgroup v2 and prepares <it>/sandbox with the controllers enabled, or says
 * why it cannot. A cgroup with processes cannot hand controllers to children, so the worker
 * first moves itself into a leaf <it>/worker (what systemd expects of a Delegate=yes service).
 */
export async function prepareCgroups(
  files: { mountinfo: string; procCgroup: string } = {
    mountinfo: '/proc/self/mountinfo',
    procCgroup: '/proc/self/cgroup',
  },
): Promise<CgroupSupport> {
  try {
    const own = ownCgroupDir(await readFile(files.mountinfo, 'utf8'), await readFile(files.procCgroup, 'utf8'));
    if ('unavailable' in own) return own;
    const missing = missingControllers(await readFile(path.join(own.dir, 'cgroup.controllers'), 'utf8'));
    if (missing.length) return { unavailable: `cgroup v2 at ${own.dir} lacks the ${missing.join(', ')} controller(s)` };
    await access(own.dir, constants.W_OK);
    const procs = (await readFile(path.join(own.dir, 'cgroup.procs'), 'utf8')).trim();
    if (procs) {
      const leaf = path.join(own.dir, 'worker');
      await mkdir(leaf, { recursive: true });
      await writeFile(path.join(leaf, 'cgroup.procs'), String(process.pid));
    }
    await enable(own.dir);
    const parent = path.join(own.dir, 'sandbox');
    await mkdir(parent, { recursive: true });
    await enable(parent);
    await writeFile(path.join(parent, 'cpu.weight'), String(SANDBOX_CPU_WEIGHT));
    return { parent };
  } catch (err) {
    return { unavailable: `cgroup v2 is not delegated to this worker (${(err as Error).message})` };
  }
}

/** A run's cgroup: where to move its first process, what it ran into, and its removal. */
export interface RunCgroup {
  dir: string;
  /** Did the kernel kill a process of the run for its memory? */
  outOfMemory(): Promise<boolean>;
  remove(): Promise<void>;
}

/** Creates <parent>/<tenant>/<run> with the run's limits. */
export async function createRunCgroup(parent: string, tenantId: string, limits: SandboxLimits): Promise<RunCgroup> {
  const tenantDir = path.join(parent, `tenant-${tenantId.replace(/[^A-Za-z0-9-]/g, '_')}`);
  await mkdir(tenantDir, { recursive: true });
  await enable(tenantDir);
  const dir = path.join(tenantDir, `run-${randomUUID()}`);
  await mkdir(dir);
  for (const [file, value] of Object.entries(runCgroupLimits(limits))) {
    // memory.swap.max exists only where the kernel accounts swap.
    if (file === 'memory.swap.max' && !(await exists(path.join(dir, file)))) continue;
    await writeFile(path.join(dir, file), value);
  }
  return {
    dir,
    async outOfMemory() {
      const events = await readFile(path.join(dir, 'memory.events'), 'utf8').catch(() => '');
      return Number(/^oom_kill (\d+)$/m.exec(events)?.[1] ?? 0) > 0;
    },
    async remove() {
      // Whatever still runs in it (nothing, normally: the pid namespace died with bwrap) goes first.
      await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => undefined);
      for (let tries = 0; ; tries++) {
        try {
          return await rmdir(dir);
        } catch (err) {
          if (tries >= 20) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
  };
}
