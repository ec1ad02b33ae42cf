import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { closeDeps, type AppDeps } from '../../api/deps';
import { RETENTION_SCHEDULE_ID, type PruneCounts, type RetentionTable } from '../../core/retention/retentionRules';
import { TASK_QUEUES } from '../../core/taskQueues';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import type { pruneRetention } from '../../workflows/retention';
import { startWorkers, testConfig, testDeps, type TestWorkers } from '../support/harness';
import { until } from '../support/processes';

// Retention against the real database (as the app role, through prune_expired_rows) and a real
// platform worker on the lane's Temporal namespace, started the way workers/main.ts starts it.

let deps: AppDeps;
let workers: TestWorkers;
const HOUR_MS = 3_600_000;

/** Starts a platform worker as a deployment configured with `interval` would. */
async function startPlatformWorker(interval: string): Promise<TestWorkers> {
  const previous = process.env.SHIPYARD_RETENTION_INTERVAL;
  process.env.SHIPYARD_RETENTION_INTERVAL = interval;
  try {
    return await startWorkers(['platform']);
  } finally {
    if (previous === undefined) delete process.env.SHIPYARD_RETENTION_INTERVAL;
    else process.env.SHIPYARD_RETENTION_INTERVAL = previous;
  }
}

/** A tenant with one run, whose logs and audit entries the tests age. */
async function createTenantWithRun(): Promise<{ tenantId: string; runId: string }> {
  const tenantId = randomUUID();
  const runId = randomUUID();
  await withTenant(deps.db, tenantId, async (trx) => {
    await trx('tenants').insert({ id: tenantId, slug: `retention-${tenantId.slice(0, 8)}`, name: 'Retention' });
    await trx('runs').insert({
      id: runId,
      tenant_id: tenantId,
      mold_slug: 'retention',
      mold_version: 1,
      mold_snapshot: {},
      parameters: {},
      started_by: 'retention-test',
      workflow_id: `retention-test-${runId}`,
    });
  });
  return { tenantId, runId };
}

/** One row per age (in days) in `table`, written in the tenant's own context. */
async function insertAged(tenant: { tenantId: string; runId: string }, table: RetentionTable, ages: number[]) {
  await withTenant(deps.db, tenant.tenantId, async (trx) => {
    for (const age of ages) {
      const createdAt = trx.raw('now() - make_interval(days => ?)', [age]);
      const row =
        table === 'run_logs'
          ? { run_id: tenant.runId, message: `${age} days old` }
          : {
              event_type: 'test',
              actor: 'retention-test',
              actor_type: 'system',
              status: 'success',
              action: `${age} days old`,
            };
      await trx(table).insert({ tenant_id: tenant.tenantId, created_at: createdAt, ...row });
    }
  });
}

/** The ages (in whole days) of the tenant's rows left in `table`, youngest first. */
async function agesLeft(tenantId: string, table: RetentionTable): Promise<number[]> {
  const rows = await withTenant(deps.db, tenantId, (trx) =>
    trx(table).select(trx.raw('extract(day from now() - created_at)::int as age')).orderBy('age'),
  );
  return rows.map((row: { age: number }) => row.age);
}

beforeAll(async () => {
  deps = await testDeps();
  // From no schedule at all, so the first start below is the one that creates it.
  await deps.temporal.schedule
    .getHandle(RETENTION_SCHEDULE_ID)
    .delete()
    .catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
  workers = await startPlatformWorker('2h');
});

afterAll(async () => {
  await workers?.stop();
  await closeDeps(deps);
});

test('the platform pool creates the retention schedule at start: the configured interval, skip on overlap, pruneRetention on the platform queue with the configured retention', async () => {
  const schedule = await deps.temporal.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
  expect(schedule.spec.intervals?.map((interval) => interval.every)).toEqual([2 * HOUR_MS]);
  expect(schedule.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
  expect(schedule.action).toEqual(
    expect.objectContaining({
      type: 'startWorkflow',
      workflowType: 'pruneRetention',
      taskQueue: TASK_QUEUES.platform,
      args: [{ keep_days: { run_logs: 30, audit_log: 365, webhook_events: 30 }, batch_size: 5_000 }],
    }),
  );
});

test('a second platform pool starting with another interval updates the one schedule rather than failing or adding one', async () => {
  const second = await startPlatformWorker('3h');
  await second.stop();
  const schedule = await deps.temporal.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
  expect(schedule.spec.intervals?.map((interval) => interval.every)).toEqual([3 * HOUR_MS]);
  // Listing reads the visibility store, which catches up with the update shortly after.
  const listed = await until('the schedule listed with its new interval', 20, async () => {
    const summaries = [];
    for await (const summary of deps.temporal.schedule.list()) {
      if (summary.scheduleId === RETENTION_SCHEDULE_ID) summaries.push(summary);
    }
    return summaries.some((summary) => summary.spec?.intervals?.[0]?.every === 3 * HOUR_MS) ? summaries : undefined;
  });
  expect(listed).toHaveLength(1);
});

test('pruneRetention deletes run logs and audit entries older than their retention in every tenant, batch after batch, and keeps younger ones', async () => {
  const tenants = [await createTenantWithRun(), await createTenantWithRun()];
  for (const tenant of tenants) {
    await insertAged(tenant, 'run_logs', [1, 29, 31, 45, 400]);
    await insertAged(tenant, 'audit_log', [1, 300, 364, 366, 500]);
  }
  const counts: PruneCounts = await deps.temporal.workflow.execute<typeof pruneRetention>('pruneRetention', {
    taskQueue: TASK_QUEUES.platform,
    workflowId: `retention-test-${randomUUID()}`,
    // Batches of two: three expired rows per tenant and table take several statements.
    args: [{ keep_days: { run_logs: 30, audit_log: 365, webhook_events: 30 }, batch_size: 2 }],
  });
  for (const tenant of tenants) {
    expect(await agesLeft(tenant.tenantId, 'run_logs')).toEqual([1, 29]);
    expect(await agesLeft(tenant.tenantId, 'audit_log')).toEqual([1, 300, 364]);
  }
  // At least ours: the database may hold other tenants' expired rows too.
  expect(counts.run_logs).toBeGreaterThanOrEqual(6);
  expect(counts.audit_log).toBeGreaterThanOrEqual(4);
});

/**
 * A webhook of the tenant with one event per entry, dispatched `age` days ago (null: never), each
 * with one delivery in `delivery` status; returns the events' ids in the entries' order.
 */
async function insertWebhookEvents(
  tenantId: string,
  events: { age: number | null; delivery: 'pending' | 'delivered' | 'failed' }[],
): Promise<string[]> {
  return withTenant(deps.db, tenantId, async (trx) => {
    const [integration] = await trx('integrations')
      .insert({ tenant_id: tenantId, name: 'Retention', type: 'custom', config: {} })
      .returning('id');
    const [webhook] = await trx('webhooks')
      .insert({
        tenant_id: tenantId,
        integration_id: integration.id,
        url: 'https://receiver.example/hook',
        events: ['entity.created'],
        secret_sealed: 'not used',
        active: false,
      })
      .returning('id');
    const ids: string[] = [];
    for (const { age, delivery } of events) {
      const dispatchedAt = age === null ? null : trx.raw('now() - make_interval(days => ?)', [age]);
      const [event] = await trx('webhook_events')
        .insert({ tenant_id: tenantId, kind: 'entity.created', data: {}, dispatched_at: dispatchedAt })
        .returning('id');
      await trx('webhook_deliveries').insert({
        tenant_id: tenantId,
        webhook_id: webhook.id,
        event_id: event.id,
        message_id: `msg_${event.id}`,
        status: delivery,
        started: true,
      });
      ids.push(event.id);
    }
    return ids;
  });
}

test('pruneRetention deletes webhook events dispatched before their retention with their deliveries, and keeps any with a delivery still pending', async () => {
  const { tenantId } = await createTenantWithRun();
  const [delivered, failed, pending, recent] = await insertWebhookEvents(tenantId, [
    { age: 40, delivery: 'delivered' },
    { age: 45, delivery: 'failed' },
    { age: 50, delivery: 'pending' },
    { age: 5, delivery: 'delivered' },
  ]);
  const counts: PruneCounts = await deps.temporal.workflow.execute<typeof pruneRetention>('pruneRetention', {
    taskQueue: TASK_QUEUES.platform,
    workflowId: `retention-test-${randomUUID()}`,
    args: [{ keep_days: { run_logs: 30, audit_log: 365, webhook_events: 30 }, batch_size: 1 }],
  });
  const left = await withTenant(deps.db, tenantId, async (trx) => ({
    events: (await trx('webhook_events').pluck('id')).sort(),
    deliveries: (await trx('webhook_deliveries').pluck('event_id')).sort(),
  }));
  expect(left.events).toEqual([pending, recent].sort());
  expect(left.deliveries).toEqual([pending, recent].sort());
  expect([delivered, failed].some((id) => left.events.includes(id))).toBe(false);
  expect(counts.webhook_events).toBeGreaterThanOrEqual(2);
});

test('triggering the schedule runs a prune on the platform pool that deletes expired rows', async () => {
  const tenant = await createTenantWithRun();
  await insertAged(tenant, 'run_logs', [2, 40]);
  await insertAged(tenant, 'audit_log', [2, 400]);
  const handle = deps.temporal.schedule.getHandle(RETENTION_SCHEDULE_ID);
  const runId = ({ action }: { action: { workflow: { firstExecutionRunId: string } } }) =>
    action.workflow.firstExecutionRunId;
  // The list of recent actions is capped, so the new one is told apart by its run, not by the count.
  const earlier = new Set((await handle.describe()).info.recentActions.map(runId));
  await handle.trigger();
  const action = await until('the triggered action to be recorded', 20, async () =>
    (await handle.describe()).info.recentActions.find((recent) => !earlier.has(runId(recent))),
  );
  const { workflowId, firstExecutionRunId } = action.action.workflow;
  const counts: PruneCounts = await deps.temporal.workflow.getHandle(workflowId, firstExecutionRunId).result();
  expect(counts.run_logs).toBeGreaterThanOrEqual(1);
  expect(await agesLeft(tenant.tenantId, 'run_logs')).toEqual([2]);
  expect(await agesLeft(tenant.tenantId, 'audit_log')).toEqual([2]);
});

test('the cross-tenant delete is narrow: only its tables, at least a day of retention, bounded batches, and the owner sees nothing outside it', async () => {
  const tenant = await createTenantWithRun();
  await insertAged(tenant, 'run_logs', [40]);
  const prune = (table: string, keepDays: number, batchSize: number) =>
    deps.db.raw('select prune_expired_rows(?, ?, ?)', [table, keepDays, batchSize]);
  await expect(prune('runs', 30, 10)).rejects.toThrow(/no retention for table runs/);
  await expect(prune('run_logs', 0, 10)).rejects.toThrow(/keep_days must be at least 1/);
  await expect(prune('run_logs', 30, 100_000)).rejects.toThrow(/batch_size must be between 1 and 10000/);
  const owner = createPool(testConfig().database.ownerUrl, 1);
  try {
    const deleted = await owner('run_logs').where({ tenant_id: tenant.tenantId }).delete();
    expect(deleted).toBe(0);
  } finally {
    await owner.destroy();
  }
  expect(await agesLeft(tenant.tenantId, 'run_logs')).toEqual([40]);
});
