// The sandbox: the one way anything is run on a tenant's behalf (forge scripts today; build and
// sync steps of later features). This file is its pure part: the command line that runs a
// script under bubblewrap with resource limits, and what the sandbox's exit means. Spawning,
// uid assignment and the start-up probe are in ./sandbox.ts.

/** What one sandboxed run may use: config.sandbox without the uid range. */
export interface SandboxLimits {
  cpuSeconds: number;
  memoryMb: number;
  maxProcesses: number;
  maxFileMb: number;
}

/** The descriptor the script text is read from (never argv, which any host user can read). */
export const SCRIPT_FD = 3;
const SCRIPT_PATH = '/run/script';
export const WORK_DIR = '/work';
/** Where the tools live inside the sandbox: the host's /usr, read-only. */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const MIB = 1024 * 1024;

export interface SandboxCommandOptions {
  /** The bubblewrap binary: a name looked up on SANDBOX_PATH, or a path. */
  bwrap: string;
  timeoutSeconds: number;
  limits: SandboxLimits;
  /**
   * RLIMIT_NPROC counts every process of the host uid. Only meaningful when the run has a uid
   * of its own; under the worker's uid it would count the worker's threads too.
   */
  limitProcesses: boolean;
}

/**
 * `timeout` → `prlimit` → `bwrap` → `/bin/sh`. `timeout -s KILL` stays outside the sandbox so a
 * script orphaned by a lost worker still dies on time; prlimit's limits are inherited by every
 * process in the sandbox.
 */
export function sandboxCommand({ bwrap, timeoutSeconds, limits, limitProcesses }: SandboxCommandOptions): string[] {
  const scratchBytes = String(limits.memoryMb * MIB);
  return [
    'timeout',
    '-s',
    'KILL',
    `${timeoutSeconds}s`,
    'prlimit',
    // SIGXCPU at the soft limit (the message below can name it), SIGKILL a second later for a
    // process that ignores it. Equal limits would send SIGKILL straight away.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--as=${limits.memoryMb * MIB}`,
    ...(limitProcesses ? [`--nproc=${limits.maxProcesses}`] : []),
    `--fsize=${limits.maxFileMb * MIB}`,
    '--core=0',
    '--',
    bwrap,
    // Every namespace: no network at all, its own pids, no view of the host's processes.
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    // Symlinks into /usr on merged-/usr systems, real folders elsewhere: bound either way.
    ...['/bin', '/sbin', '/lib', '/lib64'].flatMap((dir) => ['--ro-bind-try', dir, dir]),
    // Debian's awk, editor and pager links point into /etc/alternatives. Nothing else of /etc.
    '--ro-bind-try',
    '/etc/alternatives',
    '/etc/alternatives',
    '--ro-bind-try',
    '/etc/ld.so.cache',
    '/etc/ld.so.cache',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Scratch space lives in memory, so it is capped like memory.
    '--size',
    scratchBytes,
    '--tmpfs',
    '/tmp',
    '--size',
    scratchBytes,
    '--tmpfs',
    WORK_DIR,
    '--chdir',
    WORK_DIR,
    '--ro-bind-data',
    String(SCRIPT_FD),
    SCRIPT_PATH,
    // The root and /dev are tmpfs that bwrap built; read-only, nothing can fill them.
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '/bin/sh',
    SCRIPT_PATH,
  ];
}

export interface SandboxExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Why a run failed, in words, or null when it succeeded. bwrap exits with 128 + n when the
 * script's shell dies of signal n; a limit's signal names the limit. (A script may also exit
 * with such a code itself: the message says what the code means, not that it was certain.)
 */
export function exitProblem(exit: SandboxExit, timeoutSeconds: number, limits: SandboxLimits): string | null {
  // `timeout -s KILL` kills its whole process group, itself included.
  if (exit.signal === 'SIGKILL') return `script exceeded its time limit (${timeoutSeconds} s)`;
  if (exit.signal) return `script was killed by ${exit.signal}`;
  switch (exit.code) {
    case 0:
      return null;
    case 128 + 24: // SIGXCPU
      return `script exceeded its CPU time limit (${limits.cpuSeconds} s per process): exit code 152`;
    case 128 + 25: // SIGXFSZ
      return `script exceeded its file size limit (${limits.maxFileMb} MB per file): exit code 153`;
    case 128 + 9:
      return 'script was killed (SIGKILL: e.g. its CPU time limit, with SIGXCPU ignored): exit code 137';
    default:
      return `script exited with code ${exit.code}`;
  }
}
