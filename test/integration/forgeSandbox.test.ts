import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { apiRoutes } from '../../api/routes';
import {
  callApi,
  sessionToken,
  startApi,
  startWorkers,
  testConfig,
  type TestApi,
  type TestWorkers,
} from '../support/harness';
import { until } from '../support/processes';

// Forge scripts run in the sandbox (core/sandbox): real runs through HTTP on a real forge
// worker, each script trying to leave it and reporting what it met. Every script also prints
// what it could do, so a sandbox that refused to run anything would fail these tests too.

const run = randomUUID().slice(0, 8);
const FAKE_SECRET = `not-for-scripts-${run}`;
// Small limits, so hitting them is quick; they apply to every script of this file's worker.
const LIMITS = {
  SHIPYARD_SCRIPT_CPU_SECONDS: '2',
  SHIPYARD_SCRIPT_MEMORY_MB: '256',
  SHIPYARD_SCRIPT_MAX_PROCESSES: '20',
  SHIPYARD_SCRIPT_MAX_FILE_MB: '1',
  SHIPYARD_SANDBOX_SCRATCH_MB: '64',
  SHIPYARD_FORGE_LOG_LINES_PER_STEP: '50',
  SHIPYARD_FORGE_LOG_LINES_PER_RUN: '120',
};
// RLIMIT_NPROC holds only for a host uid other than root's: only a root worker gives each run one.
const asRoot = process.getuid?.() === 0;

let api: TestApi;
let workers: TestWorkers;
let writer: string;

beforeAll(async () => {
  process.env.SHIPYARD_FAKE_SECRET = FAKE_SECRET;
  Object.assign(process.env, LIMITS);
  workers = await startWorkers(['forge']);
  api = await startApi({ routes: apiRoutes });
  // Also creates the dev signing key in the data folder, which the first test goes after.
  writer = (await sessionToken({ tenant: `sandbox-${run}`, email: 'dev@sandbox.test', roles: ['admin'] })).token;
}, 60_000);
afterAll(async () => {
  delete process.env.SHIPYARD_FAKE_SECRET;
  for (const name of Object.keys(LIMITS)) delete process.env[name];
  await api.close();
  await workers.stop();
}, 30_000);

const call = (method: string, path: string, body?: unknown) => callApi(api, writer, method, path, body);

const BOMB = `
  bomb() { bomb | bomb & }
  (bomb 2>/dev/null) &
  exec sleep 60`;

/** How many processes on this host run as a uid in first..last (the sandbox's). */
function processesOfUids(first: number, last: number): number {
  let count = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (uid >= first && uid <= last) count++;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return count;
}

/** Creates a mold of script actions (name → script, or name → full config) with string parameters. */
async function scriptMold(actions: Record<string, string | Record<string, unknown>>, parameters: string[] = []) {
  const res = await call('POST', '/forge/molds', {
    slug: `sandbox-${randomUUID().slice(0, 8)}`,
    name: 'sandbox',
    parameters: parameters.map((name) => ({ name, type: 'string', required: true })),
    actions: Object.entries(actions).map(([name, config]) => ({
      name,
      type: 'script',
      config: typeof config === 'string' ? { script: config } : config,
    })),
  });
  expect(res.status).toBe(201);
  return res.body.slug as string;
}

async function startRun(moldSlug: string, parameters: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/forge/runs', { mold_slug: moldSlug, parameters });
  expect(res.status).toBe(201);
  return res.body.id;
}

const runStatus = async (runId: string) => (await call('GET', `/forge/runs/${runId}`)).body;

const waitForStatus = (runId: string, statuses: string[]) =>
  until(`run ${runId} in ${statuses.join('/')}`, 60, async () => {
    const body = await runStatus(runId);
    return statuses.includes(body.status) ? body : undefined;
  });

const finished = (runId: string) => waitForStatus(runId, ['completed', 'failed', 'cancelled']);

const logMessages = async (runId: string): Promise<string[]> =>
  (await call('GET', `/forge/runs/${runId}/logs`)).body.lines.map((l: { message: string }) => l.message);

/** Every line of a run's log (one page: these runs keep fewer than 1,000), with its step. */
async function logLines(runId: string): Promise<{ step_position: number | null; message: string }[]> {
  const res = await call('GET', `/forge/runs/${runId}/logs?limit=1000`);
  expect(res.body.next_cursor).toBeFalsy();
  return res.body.lines;
}

const waitForLog = (runId: string, line: string) =>
  until(`run ${runId} to log "${line}"`, 30, async () =>
    (await logMessages(runId)).includes(line) ? true : undefined,
  );

/** Whether a TCP connection to host:port opens from this (the worker's) process. */
const reachable = (target: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('what a script can reach', () => {
  test("a script cannot see the worker's environment, the data folder or the signing key, and reaches none of PostgreSQL, Elasticsearch, Temporal and its UI; it still runs", async () => {
    const config = testConfig();
    const keyFile = path.join(config.dataDir, 'auth', 'dev-signing-key.json');
    const hostPort = (url: string) => new URL(url).host;
    const services = [
      hostPort(config.database.appUrl),
      hostPort(config.elasticsearch.url),
      config.temporal.address,
      hostPort(config.temporal.uiUrl),
    ];
    // What the script goes after is really there for the worker.
    expect(existsSync(keyFile)).toBe(true);
    expect(await Promise.all(services.map(reachable))).toEqual(services.map(() => true));

    const mold = await scriptMold(
      {
        escape: `
          echo "running as uid $(id -u) in $(pwd)"
          for f in "/proc/$PARAM_WORKER_PID/environ" "$PARAM_KEY_FILE"; do
            if cat "$f" >/dev/null 2>&1; then echo "read $f"; else echo "cannot read $f"; fi
          done
          if [ -e "$PARAM_DATA_DIR" ]; then echo "sees $PARAM_DATA_DIR"; else echo "no $PARAM_DATA_DIR"; fi
          tr '\\0' '\\n' </proc/1/environ | sed 's/^/pid 1: /'
          for target in $PARAM_SERVICES; do
            if bash -c "exec 3<>/dev/tcp/\${target%:*}/\${target##*:}" 2>/dev/null; then echo "reached $target"; else echo "cannot reach $target"; fi
          done
          echo "secret=\${SHIPYARD_FAKE_SECRET:-none}"`,
      },
      ['worker_pid', 'key_file', 'data_dir', 'services'],
    );
    const parameters = {
      worker_pid: String(process.pid),
      key_file: keyFile,
      data_dir: config.dataDir,
      services: services.join(' '),
    };
    const done = await finished(await startRun(mold, parameters));
    expect(done.status).toBe('completed');
    const messages = await logMessages(done.id);
    expect(messages).toEqual(
      expect.arrayContaining([
        'running as uid 65534 in /work',
        `cannot read /proc/${process.pid}/environ`,
        `cannot read ${keyFile}`,
        `no ${config.dataDir}`,
        ...services.map((target) => `cannot reach ${target}`),
        'secret=none',
      ]),
    );
    // The sandbox's own process 1 holds only the script's variables: nothing of the worker's.
    expect(messages.filter((m) => m.startsWith('pid 1: ')).sort()).toEqual(
      [
        'HOME=/work',
        'LANG=C.UTF-8',
        'PATH=/usr/local/bin:/usr/bin:/bin',
        ...Object.entries(parameters).map(([k, v]) => `PARAM_${k.toUpperCase()}=${v}`),
      ]
        .map((line) => `pid 1: ${line}`)
        .sort(),
    );
    expect(messages.join('\n')).not.toContain(FAKE_SECRET);
  }, 60_000);

  test('a parameter holding $(...), backticks or ; stays data: printed as given, nothing runs', async () => {
    const value = '$(touch /tmp/dollar) `touch /tmp/backtick`; touch /tmp/semicolon; echo injected';
    const mold = await scriptMold(
      {
        echo: 'printf "quoted: %s\\n" "$PARAM_VALUE"; echo unquoted: $PARAM_VALUE; echo "files made: $(find /work -mindepth 1 ! -path /work/.tmp | wc -l)"',
      },
      ['value'],
    );
    const done = await finished(await startRun(mold, { value }));
    expect(done.status).toBe('completed');
    const messages = await logMessages(done.id);
    expect(messages).toEqual(expect.arrayContaining([`quoted: ${value}`, `unquoted: ${value}`, 'files made: 0']));
    expect(messages).not.toContain('injected');
  }, 60_000);
});

describe('limits', () => {
  (asRoot ? test : test.skip)(
    'a script cannot start more processes than its cap (20 here): the fork bomb stops, the step fails',
    async () => {
      const mold = await scriptMold({
        bomb: 'for i in $(seq 1 100); do sleep 60 & echo "started $i"; done; echo "all started"',
      });
      const done = await finished(await startRun(mold));
      expect(done.status).toBe('failed');
      expect(done.steps[0].error).toBe('script exited with code 2');
      const messages = await logMessages(done.id);
      expect(messages).toContain('started 10');
      expect(messages.some((m) => /Cannot fork/.test(m))).toBe(true);
      expect(messages).not.toContain('started 20');
      expect(messages).not.toContain('all started');
    },
    60_000,
  );

  (asRoot ? test : test.skip)(
    'two scripts running at once each get their own process budget',
    async () => {
      // 12 sleeps plus the shell, bwrap twice and timeout: 16 of 20 each, 32 if they shared one.
      const hold = 'for i in $(seq 1 12); do sleep 60 & done; echo "holding 12"';
      const first = await startRun(await scriptMold({ hold: `${hold}; wait` }));
      await waitForLog(first, 'holding 12');
      const second = await finished(await startRun(await scriptMold({ hold })));
      expect(second.status).toBe('completed');
      expect(await logMessages(second.id)).toContain('holding 12');
      // The first still holds its processes: the two budgets were in use at the same time.
      expect((await runStatus(first)).status).toBe('running');
      expect((await call('POST', `/forge/runs/${first}/cancel`)).status).toBe(200);
      expect((await waitForStatus(first, ['cancelled', 'failed', 'completed'])).status).toBe('cancelled');
    },
    60_000,
  );

  test('a file over the size cap (1 MB here) fails the step; a smaller one is written', async () => {
    const mold = await scriptMold({
      small: 'head -c 500000 /dev/zero >small && wc -c <small',
      big: 'head -c 2000000 /dev/zero >big && echo "never printed"',
    });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('failed');
    expect(done.steps[0].status).toBe('completed');
    expect(done.steps[1]).toEqual(
      expect.objectContaining({
        status: 'failed',
        error: 'script exceeded its file size limit (1 MB per file): exit code 153',
      }),
    );
    const messages = await logMessages(done.id);
    expect(messages).toContain('500000');
    expect(messages).not.toContain('never printed');
  }, 60_000);

  test('memory over the cap (256 MB here) cannot be allocated and fails the step; a smaller amount can', async () => {
    // dd asks for its whole buffer at once, so the address-space limit answers at once, whatever
    // the machine's load (a shell growing a string instead could reach the CPU limit first).
    const allocate = (mib: number) => `dd if=/dev/zero of=/dev/null bs=${mib}M count=1 2>&1 && echo "held ${mib} MiB"`;
    const mold = await scriptMold({ small: allocate(20), big: allocate(300) });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('failed');
    expect(done.steps[0].status).toBe('completed');
    expect(done.steps[1]).toEqual(expect.objectContaining({ status: 'failed', error: 'script exited with code 1' }));
    const messages = await logMessages(done.id);
    expect(messages).toContain('held 20 MiB');
    expect(messages.some((m) => /memory exhausted/.test(m))).toBe(true);
    expect(messages).not.toContain('held 300 MiB');
  }, 60_000);

  test("writing more than the scratch space (64 MB here) to /work and /tmp fails with the disk full; the two together held no more than 64 MB of the host's memory", async () => {
    const mold = await scriptMold({
      fill: `
        fill() { i=0; while [ $i -lt 100 ] && head -c 1048576 /dev/zero >"$1/f$i" 2>/dev/null; do i=$((i+1)); done; echo "$1 took $i MB"; }
        fill /work; fill /tmp
        echo "scratch holds $(du -sk /work | cut -f1) KB"
        head -c 1048576 /dev/zero >/work/more`,
    });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toBe('script exited with code 1');
    const messages = await logMessages(done.id);
    expect(messages).toEqual(expect.arrayContaining(['/tmp took 0 MB']));
    expect(messages.some((m) => /No space left on device/.test(m))).toBe(true);
    const workMb = Number(/^\/work took (\d+) MB$/.exec(messages.find((m) => m.startsWith('/work took'))!)![1]);
    expect(workMb).toBeGreaterThan(50);
    expect(workMb).toBeLessThanOrEqual(64);
    const heldKb = Number(/^scratch holds (\d+) KB$/.exec(messages.find((m) => m.startsWith('scratch holds'))!)![1]);
    expect(heldKb).toBeLessThanOrEqual(64 * 1024);
  }, 60_000);

  (asRoot ? test : test.skip)(
    'a fork bomb stays near its 20 processes (here) until its time limit ends it',
    async () => {
      // The script forks once to start the bomb, then execs a sleep, so the bomb goes on until
      // the time limit. Its processes are counted from the host, by the sandbox's uids: a sampler
      // inside the script would spend its own 2 s of CPU while the bomb grows on a busy machine.
      const { first, last } = testConfig().sandbox.uidRange;
      const runId = await startRun(await scriptMold({ bomb: { script: BOMB, timeout_seconds: 10 } }));
      let most = 0;
      for (let sample = 0; sample < 160; sample++) {
        most = Math.max(most, processesOfUids(first, last));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const done = await finished(runId);
      expect(done.status).toBe('failed');
      expect(done.steps[0].error).toBe('script exceeded its time limit (10 s)');
      // The bomb ran (more than the sleep and one shell), and stayed near its cap: its processes
      // come and go as forks fail, and a sample of /proc is not an exact count, but an unbounded
      // bomb reaches thousands.
      expect(most).toBeGreaterThan(2);
      expect(most).toBeLessThanOrEqual(40);
    },
    60_000,
  );

  test('a CPU spin is stopped by the CPU time limit (2 s here), long before its time limit', async () => {
    const mold = await scriptMold({ spin: { script: 'echo spinning; while :; do :; done', timeout_seconds: 120 } });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toBe('script exceeded its CPU time limit (2 s per process): exit code 152');
    expect(await logMessages(done.id)).toContain('spinning');
  }, 60_000);
});

describe('run logs', () => {
  test("100 KB of newlines is stored as the step's 50 lines and one line saying how much was not; the script is not blocked and completes", async () => {
    const mold = await scriptMold({
      blank: { script: "head -c 100000 /dev/zero | tr '\\0' '\\n'", timeout_seconds: 30 },
    });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('completed');
    expect(done.steps[0].output).toEqual({ exit_code: 0, truncated: true });
    const messages = (await logLines(done.id)).map((line) => line.message);
    expect(messages).toEqual([
      'blank: starting script (attempt 1)',
      ...Array(50).fill(''),
      'blank: output truncated at 50 lines: 99950 more lines (99950 bytes) not stored',
    ]);
  }, 60_000);

  test("a run's log keeps at most 120 lines of script output (here): past it one line says so, later steps still log their own lines", async () => {
    const mold = await scriptMold({ a: 'seq 101 150', b: 'seq 201 250', c: 'seq 301 350', d: 'echo after' });
    const done = await finished(await startRun(mold));
    expect(done.status).toBe('completed');
    const lines = await logLines(done.id);
    const ofStep = (position: number) => lines.filter((line) => line.step_position === position).map((l) => l.message);
    expect(ofStep(0)).toHaveLength(51);
    expect(ofStep(1)).toHaveLength(51);
    // 102 lines so far, and c's opening line: room for 17 of c's.
    expect(ofStep(2)).toEqual([
      'c: starting script (attempt 1)',
      ...Array.from({ length: 17 }, (_, i) => String(301 + i)),
      'run log truncated at 120 lines: later script output is read but not stored',
      "c: output truncated at the run's cap: 33 more lines (132 bytes) not stored",
    ]);
    expect(ofStep(3)).toEqual([
      'd: starting script (attempt 1)',
      "d: output truncated at the run's cap: 1 more line (6 bytes) not stored",
    ]);
  }, 60_000);
});
