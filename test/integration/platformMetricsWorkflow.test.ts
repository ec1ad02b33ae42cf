import { randomUUID } from 'node:crypto';
import type { PlatformMetricsActivities } from '../../activities/platformMetrics';
import type { rollupPlatformMetrics } from '../../workflows/platformMetrics';
import { useStubWorker } from '../support/stubWorker';

// The nightly rollup on the real Temporal server with stub activities: one activity per tenant,
// all with the day the run started on, so a run that crosses midnight does not roll up a day
// still going, and a tenant that fails is retried alone.

const TENANTS = [
  { id: randomUUID(), created: '2026-01-01' },
  { id: randomUUID(), created: '2026-02-27' },
];
const rolled: Parameters<PlatformMetricsActivities['rollUpTenantDays']>[0][] = [];
let failOnce = new Set<string>();
let day = '2026-03-01';

const stubs: PlatformMetricsActivities = {
  async listTenantsToRollUp() {
    const today = day;
    day = '2026-03-02'; // midnight passes while the run goes on
    return { today, tenants: TENANTS };
  },
  async rollUpTenantDays(input) {
    if (failOnce.delete(input.tenant_id)) throw new Error('the database went away');
    rolled.push(input);
    return input.created === '2026-02-27' ? 2 : 1;
  },
};

const stub = useStubWorker('platform-metrics-wf-test', stubs);
jest.setTimeout(30_000);

test('rolls up every tenant as of the day the run began, each in its own activity, a failed one retried alone', async () => {
  failOnce = new Set([TENANTS[1].id]);
  const result = await stub.client.workflow.execute<typeof rollupPlatformMetrics>('rollupPlatformMetrics', {
    taskQueue: stub.taskQueue,
    workflowId: `platform-metrics-test-${randomUUID()}`,
    args: [{ backfill_days: 7 }],
  });
  expect(result).toEqual({ tenants: 2, days: 3 });
  expect(rolled).toEqual([
    { tenant_id: TENANTS[0].id, created: '2026-01-01', today: '2026-03-01', backfill_days: 7 },
    { tenant_id: TENANTS[1].id, created: '2026-02-27', today: '2026-03-01', backfill_days: 7 },
  ]);
});
