import { execFile, type ChildProcess, type ExecFileOptions } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { aliasOf } from '../../search/indices';
import { createSearchEngine } from '../../search/client';
import { jsonOf, startApi, testConfig } from '../support/harness';
import { launch, ROOT, stop, until } from '../support/processes';

// Black box: the real entry points as separate processes, as `npm start` runs them.
const PORT = 18000 + Math.floor(Math.random() * 1000);
const BASE = `http://127.0.0.1:${PORT}`;
const serve = { PORT: String(PORT), HOST: '127.0.0.1' };

/** The operator CLI, as a user runs it. */
const shipyard = (args: string[], options: ExecFileOptions = {}) =>
  promisify(execFile)(path.join(ROOT, 'scripts', 'shipyard.js'), args, { encoding: 'utf8', ...options });

describe('the API and worker processes', () => {
  let api: ChildProcess;
  let workers: ChildProcess;
  let token: string;
  /** The operator's token on a JSON request. */
  let auth: Record<string, string>;
  beforeAll(async () => {
    api = launch('api/server.ts', [], serve);
    workers = launch('workers/main.ts');
    // The operator CLI, as a user would run it: its only output is the token.
    const { stdout } = await shipyard([
      'token',
      '--tenant',
      'e2e',
      '--create-tenant',
      '--email',
      'ops@e2e.test',
      '--roles',
      'admin',
      '--ttl',
      '10m',
    ]);
    token = String(stdout).trim();
    auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
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

  test("`shipyard token` run from another folder signs with the API's key, and carries --name and --groups", async () => {
    const { stdout } = await shipyard(
      ['token', '--tenant', 'e2e', '--email', 'named@e2e.test', '--name', 'Named Person', '--groups', 'g-one, g-two'],
      { cwd: tmpdir() },
    );
    const res = await fetch(`${BASE}/api/v1/me`, { headers: { authorization: `Bearer ${String(stdout).trim()}` } });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(
      expect.objectContaining({ email: 'named@e2e.test', name: 'Named Person', groups: ['g-one', 'g-two'] }),
    );
  });

  test('an API key revoked through another process fails at once in this one, though it had cached it', async () => {
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

  test('the search worker drains the outbox: an entity written through the API reaches the engine', async () => {
    const created = await fetch(`${BASE}/api/v1/entities`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: `Indexed ${PORT}-${Date.now()}`, type: 'service' }),
    });
    expect(created.status).toBe(201);
    const entity = await jsonOf(created);
    const engine = createSearchEngine(testConfig());
    try {
      const document = await until('the entity indexed', 30, async () => {
        const res = await engine.client.get({ index: aliasOf(engine, 'entities'), id: entity.id }, { ignore: [404] });
        return res.found ? res._source : undefined;
      });
      expect(document).toMatchObject({ title: entity.name, key: entity.service_id });
      // The rows leave in the drain's transaction, which commits just after the engine answered.
      await until('the backlog empty', 10, async () => {
        const status = await jsonOf(await fetch(`${BASE}/api/v1/indexing/status`, { headers: auth }));
        return status.queue_size === 0 ? status : undefined;
      });
    } finally {
      await engine.client.close();
    }
  });

  test('stop cleanly on SIGTERM: a followed run log ends at once rather than being cut, exit code 0, and the port is released', async () => {
    const post = async (path: string, body: unknown) =>
      jsonOf(await fetch(`${BASE}/api/v1${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) }));
    const mold = await post('/forge/molds', {
      slug: `gate-${Date.now()}`,
      name: 'Waits for an approval',
      actions: [{ name: 'gate', type: 'approval' }],
    });
    const run = await post('/forge/runs', { mold_slug: mold.slug, parameters: {} });
    const followed = await fetch(`${BASE}/api/v1/forge/runs/${run.id}/logs?follow=true`, { headers: auth });
    expect(followed.status).toBe(200);
    // Read to its end: the stream ends (a client then resumes elsewhere with Last-Event-ID).
    // Cut instead, after SHUTDOWN_TIMEOUT_MS, the read would fail.
    const body = followed.text();

    expect(await stop(api)).toBe(0);
    expect(await body).toContain(`: following run ${run.id}`);
    expect(await stop(workers)).toBe(0);
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

test.each([['0s'], ['-5m'], ['1x'], ['']])(
  '`shipyard token --ttl=%s` is refused with a clear message and exit code 2',
  async (ttl) => {
    const failure = await shipyard(['token', '--tenant', 'e2e', '--email', 'ops@e2e.test', `--ttl=${ttl}`]).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain(`--ttl must be a positive duration such as 90s, 30m, 1h or 7d, got "${ttl}"`);
  },
);

test('`shipyard token` refuses a tenant that does not exist unless --create-tenant is given', async () => {
  const tenant = `e2e-unknown-${Date.now()}`;
  const failure = await shipyard(['token', '--tenant', tenant, '--email', 'ops@e2e.test']).then(
    () => undefined,
    (err: { code?: number; stderr?: string }) => err,
  );
  expect(failure?.code).toBe(2);
  expect(failure?.stderr).toContain(`no tenant "${tenant}" (give --create-tenant to create it)`);
  const { stdout } = await shipyard(['token', '--tenant', tenant, '--create-tenant', '--email', 'ops@e2e.test']);
  expect(String(stdout).trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
});

test.each([
  [['--help'], 'shipyard token --tenant <id-or-slug> --email <email>'],
  [['-h'], 'shipyard seed --tenant <id-or-slug>'],
  [['token', '--help'], 'shipyard token --tenant <id-or-slug> --email <email>'],
  [['seed', '--help'], 'shipyard seed --tenant <id-or-slug> [--entities 1000]'],
])('`shipyard %j` prints usage on stdout and exits 0', async (args, usage) => {
  const { stdout, stderr } = await shipyard(args);
  expect(stdout).toMatch(/^usage:\n {2}shipyard/);
  expect(stdout).toContain(usage);
  expect(stderr).toBe('');
});
