import { WorkflowNotFoundError } from '@temporalio/client';
import { BACKFILL_WORKFLOW_ID } from '../../search/backfill';
import { useCatalogSuite } from '../support/catalogSuite';
import { sessionToken, startWorkers, testConfig, type TestWorkers } from '../support/harness';
import { until } from '../support/processes';
import { useSearchIndex } from '../support/searchIndex';

// POST /admin/backfill and its status, with the real search worker and engine: one at a time,
// every tenant read, documents written and never deleted, and who may start it.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();
const { index, drainAll, indexed } = useSearchIndex();
let operator: string;
let workers: TestWorkers | undefined;

beforeAll(async () => {
  operator = (
    await sessionToken({
      tenant: testConfig().platformTenant,
      email: `ops-${suite.run}@platform.test`,
      roles: ['admin'],
    })
  ).token;
  // A backfill left running by an interrupted earlier run would make this one a 409.
  await suite.api.deps.temporal.workflow
    .getHandle(BACKFILL_WORKFLOW_ID)
    .terminate('test setup')
    .catch((err) => {
      if (!(err instanceof WorkflowNotFoundError) && !/already completed/i.test((err as Error).message)) throw err;
    });
});

// A worker stops once its open tasks end: a tenant's scoring may be a few batches into one.
afterAll(() => workers?.stop(), 30_000);

test('a backfill reads every tenant, runs one at a time, and never deletes', async () => {
  // Indexed, then deleted in the database; the outbox row that would delete the document waits.
  const deleted = await createEntity({ name: uniqueId('Gone') });
  await drainAll();
  expect((await call(suite.adminA.token, 'DELETE', `/entities/${deleted.id}`)).status).toBe(204);
  // Written in both tenants and never drained: only the backfill can index them.
  const ours = await createEntity({ name: uniqueId('Ours') });
  const theirs = await createEntity({ name: uniqueId('Theirs') }, suite.adminB.token);

  // No search worker yet: the backfill waits, running, and a second one is refused.
  const started = await call(operator, 'POST', '/admin/backfill', { collections: ['entities', 'users'] });
  expect(started).toMatchObject({
    status: 202,
    body: { message: expect.any(String), collections: ['entities', 'users'], started_at: expect.any(String) },
  });
  expect((await call(operator, 'POST', '/admin/backfill')).status).toBe(409);
  const waiting = await call(operator, 'GET', '/admin/backfill/status');
  expect(waiting.body).toMatchObject({ status: 'running', collections: ['entities', 'users'] });

  workers = await startWorkers(['search']);
  const done = await until('the backfill completed', 60, async () => {
    const status = (await call(operator, 'GET', '/admin/backfill/status')).body;
    return status.status === 'completed' ? status : undefined;
  });
  expect(done.completed_at).toEqual(expect.any(String));
  expect(done.duration_seconds).toBeGreaterThanOrEqual(0);
  expect(done.progress.users).toEqual({ read: 0, indexed: 0, done: true });
  expect(done.progress.entities.done).toBe(true);
  expect(done.progress.entities.indexed).toBe(done.progress.entities.read);
  expect(done.progress.entities.read).toBeGreaterThanOrEqual(2);

  await index.engine.client.indices.refresh({ index: `${testConfig().elasticsearch.indexPrefix}_*` });
  expect(await indexed('entities', ours.id)).toMatchObject({ tenant_id: suite.adminA.tenantId, title: ours.name });
  expect(await indexed('entities', theirs.id)).toMatchObject({ tenant_id: suite.adminB.tenantId, title: theirs.name });
  expect(await indexed('entities', deleted.id)).toMatchObject({ title: deleted.name });

  // Once it is over, another may start.
  const again = await call(operator, 'POST', '/admin/backfill', { collections: ['teams'] });
  expect(again.status).toBe(202);
  await until('the second backfill completed', 60, async () =>
    (await call(operator, 'GET', '/admin/backfill/status')).body.status === 'completed' ? true : undefined,
  );
}, 120_000);

test("a tenant's admin may not start a backfill or read its status (it spans every tenant), and the refusal is audited", async () => {
  const refused = await call(suite.adminA.token, 'POST', '/admin/backfill');
  expect(refused.status).toBe(403);
  expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'This operation is for platform operators' });
  expect((await call(suite.adminA.token, 'GET', '/admin/backfill/status')).status).toBe(403);
  const activity = await call(suite.adminA.token, 'GET', '/admin/activity?limit=2');
  expect(
    activity.body.items.map(({ eventType, action, status }: Record<string, string>) => ({ eventType, action, status })),
  ).toEqual([
    { eventType: 'platform.operator_required', action: 'GET /api/v1/admin/backfill/status', status: 'failure' },
    { eventType: 'platform.operator_required', action: 'POST /api/v1/admin/backfill', status: 'failure' },
  ]);
});

test('unknown, duplicate or no collections, and unknown fields, are a 400', async () => {
  for (const body of [
    { collections: ['docs'] },
    { collections: ['k8s_workloads'] },
    { collections: [] },
    { collections: ['entities', 'entities'] },
    { collections: 'entities' },
    { everything: true },
  ]) {
    const res = await call(operator, 'POST', '/admin/backfill', body);
    expect({ body, status: res.status }).toEqual({ body, status: 400 });
  }
});
