import { spawn } from 'node:child_process';
import {
  exitProblem,
  inCgroupCommand,
  processMemoryMb,
  SANDBOX_NICENESS,
  SANDBOX_PATH,
  SCRIPT_FD,
  sandboxCommand,
  WORK_DIR,
  type SandboxExit,
  type SandboxLimits,
} from './bubblewrap';
import { createRunCgroup, prepareCgroups, type CgroupSupport, type RunCgroup } from './cgroups';
import { UidPool } from './uidPool';

// Runs scripts in the sandbox that ./bubblewrap.ts describes: one per call, each under a host
// uid of its own when the process runs as root and in a cgroup of its own where the host
// delegates cgroup v2 (./cgroups.ts), after a probe (once per process) that the sandbox can
// start here at all. There is no unsandboxed fallback.

/** config.sandbox: the limits, the host uids to hand out, and whether to look for cgroups. */
export interface SandboxSettings extends SandboxLimits {
  uidRange: { first: number; last: number };
  cgroups: 'auto' | 'off';
}

export interface SandboxRun {
  /** The tenant the run belongs to: its cgroup's parent, where there are cgroups. */
  tenantId: string;
  script: string;
  /** The script's variables besides PATH, HOME and LANG: the only environment it gets. */
  variables: Record<string, string>;
  timeoutSeconds: number;
  /** stdout and stderr, as they come. */
  onOutput: (chunk: Buffer) => void;
  /** Aborting kills the run. */
  signal: AbortSignal;
}

export interface SandboxResult extends SandboxExit {
  /** Why it failed, in words (a limit it hit, its exit code); null when it succeeded. */
  problem: string | null;
}

/** No sandbox can start on this host; scripts must not run. */
export class SandboxUnavailableError extends Error {
  name = 'SandboxUnavailableError';
}

export interface Sandbox {
  run(spec: SandboxRun): Promise<SandboxResult>;
  /** What the limits hold for (per run, or per process and why), in words for the start-up log. */
  isolation(): Promise<string>;
}

const PROBE_TIMEOUT_SECONDS = 10;

/**
 * `bwrap` is the bubblewrap binary to use (a name on the sandbox's PATH, or a path); `warn`
 * hears, once, about a limit this process cannot apply, and about a run's cgroup left behind;
 * `findCgroups` is where per-run cgroups go (prepareCgroups unless told).
 */
export function createSandbox(
  settings: SandboxSettings,
  options: { bwrap?: string; warn?: (message: string) => void; findCgroups?: () => Promise<CgroupSupport> } = {},
): Sandbox {
  const bwrap = options.bwrap ?? 'bwrap';
  // Root can give every run an unprivileged uid of its own. Any other user can only run
  // scripts as itself, where RLIMIT_NPROC would count its own threads too: left off.
  const uids = process.getuid?.() === 0 ? new UidPool(settings.uidRange) : undefined;
  let probed: Promise<void> | undefined;
  let cgroups: Promise<CgroupSupport> | undefined;
  const cgroupSupport = () =>
    (cgroups ??=
      settings.cgroups === 'off'
        ? Promise.resolve({ unavailable: 'SHIPYARD_SANDBOX_CGROUPS is off' })
        : (options.findCgroups ?? prepareCgroups)());

  async function start(spec: SandboxRun): Promise<SandboxResult> {
    const support = await cgroupSupport();
    const uid = uids?.take();
    let cgroup: RunCgroup | undefined;
    try {
      if ('parent' in support) cgroup = await createRunCgroup(support.parent, spec.tenantId, settings);
      const result = await spawnRun(spec, uid, cgroup);
      if (result.signal === 'SIGKILL' || result.code === 128 + 9) {
        if (await cgroup?.outOfMemory())
          return { ...result, problem: `script exceeded its memory limit (${settings.memoryMb} MB for the run)` };
      }
      return result;
    } finally {
      if (uid !== undefined) uids!.release(uid);
      // An empty cgroup left behind costs little; failing the run for it would cost its result.
      await cgroup?.remove().catch((err: Error) => options.warn?.(`a run's cgroup stays behind: ${err.message}`));
    }
  }

  function spawnRun(spec: SandboxRun, uid: number | undefined, cgroup: RunCgroup | undefined): Promise<SandboxResult> {
    const sandboxed = sandboxCommand({
      bwrap,
      timeoutSeconds: spec.timeoutSeconds,
      limits: settings,
      limitProcesses: uids !== undefined,
    });
    // In a cgroup, a root shell enters it and drops to the uid itself; else spawn sets the uid.
    const argv = cgroup ? inCgroupCommand(cgroup.dir, uid, sandboxed) : sandboxed;
    return new Promise<SandboxResult>((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), {
        cwd: '/',
        // The worker's own environment (database URLs, keys) never reaches even bwrap.
        env: { ...spec.variables, PATH: SANDBOX_PATH, HOME: WORK_DIR, LANG: 'C.UTF-8' },
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        detached: true, // own process group: a kill reaches timeout, prlimit and bwrap at once
        ...(uid !== undefined && !cgroup && { uid, gid: uid }),
      });
      const scriptPipe = child.stdio[SCRIPT_FD] as NodeJS.WritableStream;
      // bwrap may die before it reads the script (it reports why on stderr): no EPIPE crash.
      scriptPipe.on('error', () => undefined);
      scriptPipe.end(spec.script);
      child.stdout!.on('data', spec.onOutput);
      child.stderr!.on('data', spec.onOutput);
      const kill = () => {
        try {
          // Inside, --die-with-parent and the pid namespace take every process down with bwrap.
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      spec.signal.addEventListener('abort', kill, { once: true });
      if (spec.signal.aborted) kill();
      child.on('error', reject);
      child.on('close', (code, signal) => {
        spec.signal.removeEventListener('abort', kill);
        resolve({ code, signal, problem: exitProblem({ code, signal }, spec.timeoutSeconds, settings) });
      });
    });
  }

  /** Starts `true` in the sandbox; any failure is the reason no script can run. */
  async function probe(): Promise<void> {
    if (!uids) {
      options.warn?.(
        'this worker does not run as root: its sandboxed scripts run under its own uid, without a process limit ' +
          '(SHIPYARD_SCRIPT_MAX_PROCESSES is not applied); run it as root to give every script a uid of its own',
      );
    }
    const output: Buffer[] = [];
    const result = await start({
      tenantId: 'probe',
      script: 'true',
      variables: {},
      timeoutSeconds: PROBE_TIMEOUT_SECONDS,
      onOutput: (chunk) => output.push(chunk),
      signal: new AbortController().signal,
    }).catch((err: Error): SandboxResult => ({ code: null, signal: null, problem: err.message }));
    if (result.problem) {
      const said = Buffer.concat(output).toString('utf8').trim();
      throw new SandboxUnavailableError(
        `scripts cannot run on this worker: no sandbox could start (${said || result.problem}). ` +
          'Scripts never run unsandboxed; see "Script sandbox" under Security in the README, then restart the worker',
      );
    }
  }

  return {
    async run(spec) {
      await (probed ??= probe());
      return start(spec);
    },
    async isolation() {
      const support = await cgroupSupport();
      const processes = uids
        ? `at most ${settings.maxProcesses} processes per run (RLIMIT_NPROC on a uid of its own)`
        : 'no process limit (the worker is not root: scripts share its uid)';
      const perProcess =
        `${processMemoryMb(settings)} MB of address space and ${settings.cpuSeconds} s of CPU per process, ` +
        `files up to ${settings.maxFileMb} MB, a ${settings.scratchMb} MB scratch tmpfs, nice ${SANDBOX_NICENESS}`;
      return 'parent' in support
        ? `per run: a cgroup v2 under ${support.parent}/<tenant>/ (${settings.memoryMb} MB of memory including ` +
            `scratch, ${settings.maxProcesses} processes, one core; tenants weighted equally), ` +
            `and per process ${perProcess}`
        : `per process, not per run (${support.unavailable}): ${perProcess}; ${processes}`;
    },
  };
}

let shared: Sandbox | undefined;

/**
 * This process's sandbox, created on first use: everything that runs scripts here shares one
 * uid pool (so no two runs ever hold the same uid) and one probe answer.
 */
export function processSandbox(settings: SandboxSettings, options: { warn?: (message: string) => void } = {}): Sandbox {
  return (shared ??= createSandbox(settings, options));
}
