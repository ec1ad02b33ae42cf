// The sandbox: the one way anything is run on a tenant's behalf (forge scripts today; build and
// sync steps of later features). This file is its pure part: the command line that runs a
// script under bubblewrap with resource limits, and what the sandbox's exit means. Spawning,
// uid assignment, per-run cgroups and the start-up probe are in ./sandbox.ts and ./cgroups.ts.

/** What one sandboxed run may use: part of config.sandbox. */
export interface SandboxLimits {
  cpuSeconds: number;
  /** The run's memory: its scratch space plus what each process may map. */
  memoryMb: number;
  /** Of memoryMb, the scratch space (/work, with /tmp inside it): a tmpfs, so memory. */
  scratchMb: number;
  maxProcesses: number;
  maxFileMb: number;
}

/** The descriptor the script text is read from (never argv, which any host user can read). */
export const SCRIPT_FD = 3;
const SCRIPT_PATH = '/run/script';
export const WORK_DIR = '/work';
const TMP_IN_WORK = `${WORK_DIR}/.tmp`;
/** Where the tools live inside the sandbox: the host's /usr, read-only. */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const MIB = 1024 * 1024;
/** Scripts run at the lowest CPU priority: under contention the API and the worker go first. */
export const SANDBOX_NICENESS = 19;

/** The address space each process of a run may map: the run's memory less its scratch space. */
export const processMemoryMb = (limits: SandboxLimits) => limits.memoryMb - limits.scratchMb;

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
 * `timeout` → `nice` → `prlimit` → `bwrap` → `/bin/sh`. `timeout -s KILL` stays outside the
 * sandbox so a script orphaned by a lost worker still dies on time; the niceness and prlimit's
 * limits are inherited by every process in the sandbox.
 */
export function sandboxCommand({ bwrap, timeoutSeconds, limits, limitProcesses }: SandboxCommandOptions): string[] {
  return [
    'timeout',
    '-s',
    'KILL',
    `${timeoutSeconds}s`,
    'nice',
    '-n',
    String(SANDBOX_NICENESS),
    'prlimit',
    // SIGXCPU at the soft limit (the message below can name it), SIGKILL a second later for a
    // process that ignores it. Equal limits would send SIGKILL straight away.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--as=${processMemoryMb(limits) * MIB}`,
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
    // Scratch space lives in memory, so it is part of the run's memory: one tmpfs of that size,
    // /tmp a folder in it, so the two cannot each take the whole of it.
    '--size',
    String(limits.scratchMb * MIB),
    '--perms',
    '1777',
    '--tmpfs',
    WORK_DIR,
    '--perms',
    '1777',
    '--dir',
    TMP_IN_WORK,
    '--symlink',
    TMP_IN_WORK,
    '/tmp',
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

/**
 * `argv` started by a root shell that first moves itself into the cgroup `dir` (so every process
 * of the run is born in it), then drops to `uid` when given.
 */
export function inCgroupCommand(dir: string, uid: number | undefined, argv: string[]): string[] {
  const dropPrivileges =
    uid === undefined ? [] : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--'];
  return ['/bin/sh', '-c', 'echo $$ >"$0/cgroup.procs" && exec "$@"', dir, ...dropPrivileges, ...argv];
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
