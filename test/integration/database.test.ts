import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import knex from 'knex';
import { libpqEnvironment, locatePgDump } from '../../activities/pgDump';
import { findTenantId } from '../../core/auth/store';
import { insertBackup } from '../../core/database/store';
import { DATABASE_BACKUP_WORKFLOW_ID } from '../../core/database/types';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';
import { sessionToken, startWorkers, testConfig, type TestWorkers } from '../support/harness';
import { until } from '../support/processes';

// /database/*: the platform operator's view of the database and its backups, with the real
// platform worker, pg_dump and pg_restore. The restore goes into `<test database>_restore`,
// which scripts/services creates beside the test database.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();
const config = testConfig();
let operator: string;
let workers: TestWorkers | undefined;

const ROUTES = [
  ['GET', '/database/info'],
  ['GET', '/database/connections'],
  ['POST', '/database/backup'],
  ['GET', '/database/backups'],
] as const;

/** Another database of the same server, as `url`'s role. */
const onDatabase = (url: string, database: string) => {
  const other = new URL(url);
  other.pathname = `/${database}`;
  return other.toString();
};

function run(command: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exit ${code}: ${stderr}`))));
  });
}

async function settled(id: string) {
  return until(`backup ${id} settled`, 60, async () => {
    const { backups } = (await call(operator, 'GET', '/database/backups?limit=100')).body;
    const backup = backups.find((b: { id: string }) => b.id === id);
    return backup && backup.status !== 'running' ? backup : undefined;
  });
}

beforeAll(async () => {
  operator = (
    await sessionToken({ tenant: config.platformTenant, email: `ops-${suite.run}@platform.test`, roles: ['admin'] })
  ).token;
  // A backup left running by an interrupted earlier run would make this one a 409.
  await suite.api.deps.temporal.workflow
    .getHandle(DATABASE_BACKUP_WORKFLOW_ID)
    .terminate('test setup')
    .catch((err) => {
      if (!(err instanceof WorkflowNotFoundError) && !/already completed/i.test((err as Error).message)) throw err;
    });
});

// A worker stops once its open tasks end: a tenant's scoring may be a few batches into one.
afterAll(() => workers?.stop(), 30_000);

test.each(ROUTES)(
  '%s %s refuses a tenant admin with 403 and a caller without a token with 401',
  async (method, route) => {
    const refused = await call(suite.adminA.token, method, route);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    const res = await fetch(`${suite.api.url}/api/v1${route}`, { method });
    expect(res.status).toBe(401);
  },
);

test("the operator sees the database's size and connection counts", async () => {
  const { status, body } = await call(operator, 'GET', '/database/info');
  expect(status).toBe(200);
  expect(body).toMatchObject({
    database: config.database.systemUrl.split('/').pop(),
    server_version: expect.any(String),
  });
  expect(body.size_bytes).toBeGreaterThan(0);
  const counted = Object.values(body.connections.by_state as Record<string, number>).reduce((a, b) => a + b, 0);
  expect(counted).toBe(body.connections.total);
  expect(body.connections.total).toBeGreaterThan(0);
});

test('the connection list shows a running query by its age, never its text or client address', async () => {
  const marker = `secret_${suite.run}`;
  // A query of the reading role itself, whose backends it may always inspect.
  const other = createPool(config.database.systemUrl, 1);
  try {
    // `then` sends it (a knex query waits to be awaited).
    const sleeping = other.raw(`select pg_sleep(2) as ${marker}`).then(() => undefined);
    const listed = await until('the sleeping query listed', 10, async () => {
      const { body } = await call(operator, 'GET', '/database/connections');
      const active = body.connections.filter(
        (c: { state: string; query_age_seconds: number | null }) => c.state === 'active' && c.query_age_seconds! > 0.2,
      );
      return active.length > 0 ? body : undefined;
    });
    await sleeping;
    expect(JSON.stringify(listed)).not.toContain(marker);
    for (const connection of listed.connections) {
      expect(Object.keys(connection).sort()).toEqual(
        [
          'application_name',
          'backend_start',
          'backend_type',
          'pid',
          'query_age_seconds',
          'role',
          'state',
          'wait_event',
          'wait_event_type',
        ].sort(),
      );
    }
  } finally {
    await other.destroy();
  }
});

test('one backup at a time: a second while one runs is a 409', async () => {
  // No platform worker yet: the first backup waits, running, for one.
  const first = await call(operator, 'POST', '/database/backup');
  expect(first.status).toBe(201);
  expect(first.body).toMatchObject({ status: 'running', size_bytes: null, sha256: null });
  const second = await call(operator, 'POST', '/database/backup');
  expect(second.status).toBe(409);
  const { backups } = (await call(operator, 'GET', '/database/backups')).body;
  expect(backups.map((b: { id: string }) => b.id)).toContain(first.body.id);
  expect(backups.map((b: { id: string }) => b.id)).not.toContain(second.body.id);
  workers = await startWorkers(['platform']);
  expect(await settled(first.body.id)).toMatchObject({ status: 'completed' });
}, 90_000);

test('a backup completes with its size and checksum, and restores into a scratch database with the same rows', async () => {
  workers ??= await startWorkers(['platform']); // also when run on its own
  const entity = await createEntity({ name: uniqueId('Backed up') });
  const started = await call(operator, 'POST', '/database/backup');
  expect(started.status).toBe(201);
  const backup = await settled(started.body.id);
  expect(backup).toMatchObject({ status: 'completed', error: null, requested_by: `ops-${suite.run}@platform.test` });
  const file = path.join(config.backups.dir, backup.file_name);
  const dump = await readFile(file);
  expect(backup.size_bytes).toBe(dump.length);
  expect(backup.sha256).toBe(createHash('sha256').update(dump).digest('hex'));
  expect(backup.duration_ms).toBeGreaterThanOrEqual(0);

  // The runbook's restore (docs/operations.md), into the scratch database.
  const scratch = `${config.database.systemUrl.split('/').pop()}_restore`;
  const owner = knex({ client: 'pg', connection: onDatabase(config.database.ownerUrl, scratch) });
  const system = knex({ client: 'pg', connection: onDatabase(config.database.systemUrl, scratch) });
  try {
    await owner.raw('drop schema public cascade; create schema public');
    const pgRestore = path.join(path.dirname(await locatePgDump(config.backups.pgDump)), 'pg_restore');
    await run(pgRestore, ['--exit-on-error', '--no-password', `--dbname=${scratch}`, file], {
      ...libpqEnvironment(config.database.ownerUrl),
      PGDATABASE: scratch,
    });
    const restored = await system('entities').where({ id: entity.id }).first('name', 'tenant_id');
    expect(restored).toEqual({ name: entity.name, tenant_id: suite.adminA.tenantId });
    const live = suite.api.deps.system;
    const countOf = async (db: typeof live) => Number((await db('entities').count({ n: '*' }).first())!.n);
    expect(await countOf(system)).toBe(await countOf(live));
  } finally {
    await Promise.all([owner.destroy(), system.destroy()]);
  }
}, 90_000);

test('a dump that fails (no such database) is recorded failed with its error and leaves no file', async () => {
  await workers?.stop();
  const broken = testConfig();
  broken.backups = {
    ...broken.backups,
    databaseUrl: onDatabase(broken.backups.databaseUrl, `no_such_db_${suite.run}`),
  };
  workers = await startWorkers(['platform'], { config: broken });
  const started = await call(operator, 'POST', '/database/backup');
  expect(started.status).toBe(201);
  const backup = await settled(started.body.id);
  expect(backup).toMatchObject({ status: 'failed', size_bytes: null, sha256: null });
  expect(backup.error).toMatch(/no_such_db_.* does not exist/);
  await expect(access(path.join(config.backups.dir, backup.file_name))).rejects.toThrow();
}, 90_000);

test('a backup whose workflow ended without recording it is failed when the next one starts', async () => {
  const orphan = randomUUID();
  const platform = (await findTenantId(suite.api.deps.system, config.platformTenant))!;
  await withTenant(suite.api.deps.db, platform, (trx) =>
    insertBackup(trx, { id: orphan, tenant_id: platform, file_name: 'orphan.dump', requested_by: 'test' }),
  );
  const started = await call(operator, 'POST', '/database/backup');
  expect(started.status).toBe(201);
  await settled(started.body.id);
  expect(await settled(orphan)).toMatchObject({
    status: 'failed',
    error: expect.stringContaining('without recording'),
  });
}, 90_000);

test('the backups list pages newest first', async () => {
  const first = await call(operator, 'GET', '/database/backups?limit=1');
  expect(first.body.backups).toHaveLength(1);
  expect(first.body.next_cursor).not.toBe('');
  const next = await call(operator, 'GET', `/database/backups?limit=1&cursor=${first.body.next_cursor}`);
  expect(Date.parse(next.body.backups[0].started_at)).toBeLessThanOrEqual(Date.parse(first.body.backups[0].started_at));
  expect(next.body.backups[0].id).not.toBe(first.body.backups[0].id);
});
