import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exitProblem, inCgroupCommand, sandboxCommand, type SandboxLimits } from '../../core/sandbox/bubblewrap';
import {
  createRunCgroup,
  missingControllers,
  ownCgroupDir,
  prepareCgroups,
  runCgroupLimits,
} from '../../core/sandbox/cgroups';
import { createSandbox, SandboxUnavailableError, type SandboxRun } from '../../core/sandbox/sandbox';
import { UidPool } from '../../core/sandbox/uidPool';

// The sandbox's command line and exit meanings (pure), its uid pool, and its start-up probe
// against a real bubblewrap and a missing one. Runs through the forge are in
// test/integration/forgeSandbox.test.ts.

const limits: SandboxLimits = { cpuSeconds: 60, memoryMb: 512, scratchMb: 128, maxProcesses: 64, maxFileMb: 64 };

describe('sandboxCommand', () => {
  const argv = sandboxCommand({ bwrap: 'bwrap', timeoutSeconds: 30, limits, limitProcesses: true });

  test('the wall-clock limit is outermost, then the lowest priority and the resource limits, then bwrap running /bin/sh on the script from its descriptor', () => {
    expect(argv.slice(0, 7)).toEqual(['timeout', '-s', 'KILL', '30s', 'nice', '-n', '19']);
    const prlimit = argv.slice(7, argv.indexOf('--'));
    expect(prlimit).toEqual([
      'prlimit',
      '--cpu=60:61',
      // The run's 512 MB less its 128 MB of scratch space.
      `--as=${384 * 1024 * 1024}`,
      '--nproc=64',
      `--fsize=${64 * 1024 * 1024}`,
      '--core=0',
    ]);
    expect(argv[argv.indexOf('--') + 1]).toBe('bwrap');
    expect(argv.slice(-2)).toEqual(['/bin/sh', '/run/script']);
    expect(argv.join(' ')).toContain('--ro-bind-data 3 /run/script');
  });

  test('bwrap unshares every namespace (network included), binds /usr read-only and nothing of the host that holds data', () => {
    expect(argv).toEqual(
      expect.arrayContaining([
        '--unshare-all',
        '--unshare-user',
        '--disable-userns',
        '--die-with-parent',
        '--new-session',
      ]),
    );
    expect(argv).not.toContain('--share-net');
    const binds = argv.flatMap((arg, i) =>
      /^--(ro-)?bind(-try)?$|^--dev-bind/.test(arg) ? [`${arg} ${argv[i + 1]}`] : [],
    );
    expect(binds).toEqual([
      '--ro-bind /usr',
      '--ro-bind-try /bin',
      '--ro-bind-try /sbin',
      '--ro-bind-try /lib',
      '--ro-bind-try /lib64',
      '--ro-bind-try /etc/alternatives',
      '--ro-bind-try /etc/ld.so.cache',
    ]);
  });

  test("the scratch space is one tmpfs of the run's scratch size, /tmp a folder in it: the two together hold no more", () => {
    const command = argv.join(' ');
    expect(command).toContain(`--size ${128 * 1024 * 1024} --perms 1777 --tmpfs /work --perms 1777 --dir /work/.tmp`);
    expect(command).toContain('--symlink /work/.tmp /tmp');
    expect(argv.filter((arg) => arg === '--tmpfs')).toHaveLength(1);
  });

  test('without a uid of its own the run gets no process limit (it would count the worker itself)', () => {
    const shared = sandboxCommand({ bwrap: '/opt/bwrap', timeoutSeconds: 30, limits, limitProcesses: false });
    expect(shared.some((arg) => arg.startsWith('--nproc'))).toBe(false);
    expect(shared).toContain('/opt/bwrap');
  });
});

describe('exitProblem', () => {
  test('names the limit a run hit, its exit code otherwise, and nothing on success', () => {
    expect(exitProblem({ code: 0, signal: null }, 30, limits)).toBeNull();
    expect(exitProblem({ code: null, signal: 'SIGKILL' }, 30, limits)).toBe('script exceeded its time limit (30 s)');
    expect(exitProblem({ code: 152, signal: null }, 30, limits)).toBe(
      'script exceeded its CPU time limit (60 s per process): exit code 152',
    );
    expect(exitProblem({ code: 153, signal: null }, 30, limits)).toBe(
      'script exceeded its file size limit (64 MB per file): exit code 153',
    );
    expect(exitProblem({ code: 3, signal: null }, 30, limits)).toBe('script exited with code 3');
  });
});

describe('per-run cgroups', () => {
  test("a run's cgroup holds its memory (scratch included), its processes and one core, without swap", () => {
    expect(runCgroupLimits(limits)).toEqual({
      'memory.max': String(512 * 1024 * 1024),
      'memory.swap.max': '0',
      'pids.max': '64',
      'cpu.max': '100000 100000',
    });
  });

  test('a root shell enters the cgroup first, then drops to the run uid and runs the sandbox', () => {
    expect(inCgroupCommand('/cg/run-1', 100001, ['timeout', '5s'])).toEqual([
      '/bin/sh',
      '-c',
      'echo $$ >"$0/cgroup.procs" && exec "$@"',
      '/cg/run-1',
      'setpriv',
      '--reuid=100001',
      '--regid=100001',
      '--clear-groups',
      '--',
      'timeout',
      '5s',
    ]);
  });

  const mountinfo = [
    '30 24 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory',
    '35 24 0:31 / /sys/fs/cgroup/unified rw,relatime shared:14 - cgroup2 cgroup2 rw',
  ].join('\n');

  test("the worker's cgroup v2 folder is found from the mount table and its own membership", () => {
    expect(ownCgroupDir(mountinfo, '4:memory:/x\n0::/system.slice/worker.service\n')).toEqual({
      dir: '/sys/fs/cgroup/unified/system.slice/worker.service',
    });
    // In a cgroup namespace the mount's root is a prefix of the path.
    const namespaced = '35 24 0:31 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw';
    expect(ownCgroupDir(namespaced, '0::/kubepods/pod1/c1\n')).toEqual({ dir: '/sys/fs/cgroup/c1' });
    expect(ownCgroupDir(mountinfo.split('\n')[0], '0::/\n')).toEqual({
      unavailable: 'no cgroup v2 hierarchy is mounted',
    });
  });

  test('cgroup v2 counts only with the cpu, memory and pids controllers, as on a host whose v1 holds them', () => {
    expect(missingControllers('cpuset cpu io memory hugetlb pids rdma')).toEqual([]);
    expect(missingControllers('\n')).toEqual(['cpu', 'memory', 'pids']);
  });

  test('without the controllers the worker falls back, naming why', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cgroup-'));
    try {
      await mkdir(path.join(dir, 'unified'));
      await writeFile(path.join(dir, 'unified', 'cgroup.controllers'), 'hugetlb\n');
      await writeFile(path.join(dir, 'mountinfo'), `35 24 0:31 / ${dir}/unified rw - cgroup2 cgroup2 rw\n`);
      await writeFile(path.join(dir, 'cgroup'), '0::/\n');
      const files = { mountinfo: path.join(dir, 'mountinfo'), procCgroup: path.join(dir, 'cgroup') };
      expect(await prepareCgroups(files)).toEqual({
        unavailable: `cgroup v2 at ${dir}/unified lacks the cpu, memory, pids controller(s)`,
      });
      // With them (a folder standing in for a delegated cgroup), the sandbox parent is prepared.
      await writeFile(path.join(dir, 'unified', 'cgroup.controllers'), 'cpu memory pids\n');
      await writeFile(path.join(dir, 'unified', 'cgroup.procs'), '');
      expect(await prepareCgroups(files)).toEqual({ parent: `${dir}/unified/sandbox` });
      expect(await readFile(path.join(dir, 'unified', 'sandbox', 'cgroup.subtree_control'), 'utf8')).toBe(
        '+cpu +memory +pids',
      );
      expect(await readFile(path.join(dir, 'unified', 'sandbox', 'cpu.weight'), 'utf8')).toBe('10');
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  test('this host: the start-up line says what the limits hold for', async () => {
    const settings = { ...limits, uidRange: { first: 100000, last: 165535 }, cgroups: 'off' as const };
    expect(await createSandbox(settings).isolation()).toBe(
      'per process, not per run (SHIPYARD_SANDBOX_CGROUPS is off): 384 MB of address space and 60 s of CPU per process, ' +
        'files up to 64 MB, a 128 MB scratch tmpfs, nice 19; ' +
        (process.getuid?.() === 0
          ? 'at most 64 processes per run (RLIMIT_NPROC on a uid of its own)'
          : 'no process limit (the worker is not root: scripts share its uid)'),
    );
  });
});

describe('UidPool', () => {
  test('hands out distinct uids within the range, wrapping around, until all are taken; a released uid comes back', () => {
    const pool = new UidPool({ first: 200, last: 202 });
    const taken = [pool.take(), pool.take(), pool.take()];
    expect([...taken].sort()).toEqual([200, 201, 202]);
    expect(() => pool.take()).toThrow('all 3 sandbox uids (200-202) are in use');
    pool.release(taken[1]);
    expect(pool.take()).toBe(taken[1]);
  });
});

describe('createSandbox', () => {
  const settings = { ...limits, uidRange: { first: 100000, last: 165535 }, cgroups: 'auto' as const };
  const run = (sandbox: ReturnType<typeof createSandbox>, spec: Partial<SandboxRun>) => {
    const output: Buffer[] = [];
    return sandbox
      .run({
        tenantId: 'unit',
        script: 'true',
        variables: {},
        timeoutSeconds: 10,
        onOutput: (chunk) => output.push(chunk),
        signal: new AbortController().signal,
        ...spec,
      })
      .then((result) => ({ ...result, output: Buffer.concat(output).toString('utf8') }));
  };

  test('without bubblewrap no script runs: the error names the cause and the README section, every time', async () => {
    const sandbox = createSandbox(settings, { bwrap: '/nonexistent/bwrap' });
    for (let i = 0; i < 2; i++) {
      const failure = run(sandbox, { script: 'echo ran' });
      await expect(failure).rejects.toThrow(SandboxUnavailableError);
      await expect(failure).rejects.toThrow(
        /no sandbox could start \(.*\/nonexistent\/bwrap: No such file or directory\).*"Script sandbox" under Security in the README/,
      );
    }
  });

  test('with bubblewrap a script runs and sees only the variables it was given', async () => {
    process.env.SHIPYARD_UNIT_SECRET = 'worker-only';
    try {
      const result = await run(createSandbox(settings), { script: 'env | sort', variables: { PARAM_NAME: 'value' } });
      expect(result).toEqual(expect.objectContaining({ code: 0, problem: null }));
      expect(result.output.trim().split('\n')).toEqual([
        'HOME=/work',
        'LANG=C.UTF-8',
        'PARAM_NAME=value',
        'PATH=/usr/local/bin:/usr/bin:/bin',
        'PWD=/work',
      ]);
    } finally {
      delete process.env.SHIPYARD_UNIT_SECRET;
    }
  });

  test("with cgroups, a run's first process enters a cgroup of its own under its tenant's, limited before the script starts", async () => {
    // Folders stand in for a delegated cgroup v2: the files are what the kernel would read.
    const parent = await mkdtemp(path.join(tmpdir(), 'sandbox-cgroups-'));
    try {
      const warnings: string[] = [];
      const sandbox = createSandbox(settings, {
        findCgroups: async () => ({ parent }),
        warn: (message) => warnings.push(message),
      });
      const result = await run(sandbox, { tenantId: 'tenant-a', script: 'echo ran' });
      expect(result).toEqual(expect.objectContaining({ code: 0, problem: null, output: 'ran\n' }));
      const tenantDir = path.join(parent, 'tenant-tenant-a');
      expect(await readFile(path.join(tenantDir, 'cgroup.subtree_control'), 'utf8')).toBe('+cpu +memory +pids');
      const [runDir] = (await readdir(tenantDir)).filter((name) => name.startsWith('run-'));
      const file = (name: string) => readFile(path.join(tenantDir, runDir, name), 'utf8');
      expect(Number(await file('cgroup.procs'))).toBeGreaterThan(1);
      expect(await file('memory.max')).toBe(String(512 * 1024 * 1024));
      expect(await file('pids.max')).toBe('64');
      // A folder is not a cgroup: it cannot be removed while it holds files, and the run still succeeds.
      expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^a run's cgroup stays behind: /)]));
    } finally {
      await rm(parent, { recursive: true });
    }
  }, 20_000);

  test("a run's cgroup says whether the kernel killed a process of it for memory", async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'sandbox-cgroups-'));
    try {
      const cgroup = await createRunCgroup(parent, 'tenant-b', limits);
      expect(await cgroup.outOfMemory()).toBe(false);
      await writeFile(path.join(cgroup.dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
      expect(await cgroup.outOfMemory()).toBe(true);
    } finally {
      await rm(parent, { recursive: true });
    }
  });
});
