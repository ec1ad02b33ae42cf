import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { jsonOf, startApi } from '../support/harness';

// Black box: the real entry points as separate processes, as `npm start` runs them.
const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const PORT = 18000 + Math.floor(Math.random() * 1000);
const BASE = `http://127.0.0.1:${PORT}`;

function launch(script: string): ChildProcess {
  const child = spawn(TSX, [script], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk) => process.stderr.write(chunk));
  return child;
}

async function until<T>(what: string, seconds: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${what} not reached within ${seconds}s`);
}

async function stopCleanly(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

describe('the API and worker processes', () => {
  let api: ChildProcess;
  let workers: ChildProcess;
  let token: string;
  beforeAll(async () => {
    api = launch('api/server.ts');
    workers = launch('workers/main.ts');
    // The operator CLI, as a user would run it: its only output is the token.
    const { stdout } = await promisify(execFile)(path.join(ROOT, 'scripts', 'shipyard.js'), [
      'token', '--tenant', 'e2e', '--email', 'ops@e2e.test', '--roles', 'admin', '--ttl', '10m',
    ]);
    token = stdout.trim();
  });
  afterAll(() => {
    for (const child of [api, workers]) if (child.exitCode === null) child.kill('SIGKILL');
  });

  test('serve /api/v1/system, with a token from `shipyard token`, with every service and pool up', async () => {
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const body = await until('system ok', 90, async () => {
      const res = await jsonOf(await fetch(`${BASE}/api/v1/system`, { headers: { authorization: `Bearer ${token}` } }));
      return res.status === 'ok' ? res : undefined;
    });
    expect(Object.values(body.worker_pools).every((pool) => (pool as { status: string }).status === 'up')).toBe(true);
  }, 120_000);

  test('an API key revoked through another process fails at once in this one, though it had cached it', async () => {
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const key = await jsonOf(
      await fetch(`${BASE}/api/v1/admin/api-keys`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: 'e2e', scopes: ['catalog:read'] }),
      }),
    );
    const asKey = { authorization: `Bearer ${key.token}` };
    expect((await fetch(`${BASE}/api/v1/me`, { headers: asKey })).status).toBe(200);
    const other = await startApi();
    try {
      const revoked = await fetch(`${other.url}/api/v1/admin/api-keys/${key.id}`, { method: 'DELETE', headers: auth });
      expect(revoked.status).toBe(204);
    } finally {
      await other.close();
    }
    expect((await fetch(`${BASE}/api/v1/me`, { headers: asKey })).status).toBe(401);
  });

  test('stop cleanly on SIGTERM: exit code 0, and the port is released', async () => {
    expect(await stopCleanly(api)).toBe(0);
    expect(await stopCleanly(workers)).toBe(0);
    await expect(fetch(`${BASE}/healthz`)).rejects.toThrow();
  }, 60_000);
});

test('scripts/services status prints one line per service, each up with its address', async () => {
  const { stdout } = await promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'services'), 'status']);
  const lines = stdout.trim().split('\n');
  expect(lines.map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
    ['postgres', 'up'],
    ['temporal', 'up'],
    ['temporal-ui', 'up'],
    ['elasticsearch', 'up'],
  ]);
  for (const line of lines) expect(line).toMatch(/127\.0\.0\.1:\d+/);
});
