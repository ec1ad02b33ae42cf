import { exitProblem, sandboxCommand, type SandboxLimits } from '../../core/sandbox/bubblewrap';
import { createSandbox, SandboxUnavailableError, type SandboxRun } from '../../core/sandbox/sandbox';
import { UidPool } from '../../core/sandbox/uidPool';

// The sandbox's command line and exit meanings (pure), its uid pool, and its start-up probe
// against a real bubblewrap and a missing one. Runs through the forge are in
// test/integration/forgeSandbox.test.ts.

const limits: SandboxLimits = { cpuSeconds: 60, memoryMb: 512, maxProcesses: 64, maxFileMb: 64 };

describe('sandboxCommand', () => {
  const argv = sandboxCommand({ bwrap: 'bwrap', timeoutSeconds: 30, limits, limitProcesses: true });

  test('the wall-clock limit is outermost, then the resource limits, then bwrap running /bin/sh on the script from its descriptor', () => {
    expect(argv.slice(0, 4)).toEqual(['timeout', '-s', 'KILL', '30s']);
    const prlimit = argv.slice(4, argv.indexOf('--'));
    expect(prlimit).toEqual([
      'prlimit',
      '--cpu=60:61',
      `--as=${512 * 1024 * 1024}`,
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
  const settings = { ...limits, uidRange: { first: 100000, last: 165535 } };
  const run = (sandbox: ReturnType<typeof createSandbox>, spec: Partial<SandboxRun>) => {
    const output: Buffer[] = [];
    return sandbox
      .run({
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
});
