import { randomUUID } from 'node:crypto';
import type { LicenseActivities } from '../../activities/license';
import type { DisconnectTenantInput } from '../../core/license/licenseWorkflows';
import type { betaGrace } from '../../workflows/betaGrace';
import { useTimeSkippingStubWorker } from '../support/stubWorker';

// The 30-day Beta grace on Temporal's time-skipping test server (useTimeSkippingStubWorker),
// never by waiting. @temporalio/testing's TestWorkflowEnvironment would drive the same binary; it
// is not a dependency here, so the test talks to it with the client and worker the project
// already uses. The real workflow code runs, with a stub activity.

jest.setTimeout(120_000);

const GRACE_MS = 30 * 86_400_000;
const disconnects: DisconnectTenantInput[] = [];
const stubs: LicenseActivities = {
  async listTenantsPastBetaGrace() {
    return [];
  },
  async disconnectTenant(input) {
    disconnects.push(input);
    return { kept: 'kept', revoked: ['other'] };
  },
};

const temporal = useTimeSkippingStubWorker('beta-grace-time-skipping', stubs);

test('a 30-day grace runs out on the test server in seconds of real time: one 30-day timer, then the disconnect', async () => {
  const tenantId = randomUUID();
  const startedAt = Date.now();
  const handle = await temporal.client.workflow.start<typeof betaGrace>('betaGrace', {
    taskQueue: temporal.taskQueue,
    workflowId: `beta-grace-${tenantId}`,
    args: [{ tenant_id: tenantId, grace_ends_at: new Date(startedAt + GRACE_MS).toISOString(), grace_ms: GRACE_MS }],
  });
  expect(await handle.result()).toEqual({
    outcome: 'disconnected',
    disconnection: { kept: 'kept', revoked: ['other'] },
  });
  // Not waited for: a minute of real time at most, for a month of the server's.
  expect(Date.now() - startedAt).toBeLessThan(60_000);
  expect(disconnects).toEqual([{ tenant_id: tenantId, grace_ms: GRACE_MS }]);
  const { events } = await handle.fetchHistory();
  const timer = events!.find((e) => e.timerStartedEventAttributes)!.timerStartedEventAttributes!;
  const timerSeconds = Number(timer.startToFireTimeout!.seconds);
  expect(timerSeconds).toBeGreaterThan(GRACE_MS / 1000 - 60);
  expect(timerSeconds).toBeLessThanOrEqual(GRACE_MS / 1000);
  const fired = events!.find((e) => e.timerFiredEventAttributes)!;
  const started = events!.find((e) => e.timerStartedEventAttributes)!;
  const skippedMs = (Number(fired.eventTime!.seconds) - Number(started.eventTime!.seconds)) * 1000;
  expect(skippedMs).toBeGreaterThanOrEqual(GRACE_MS - 60_000);
});

test('a license change during a 30-day grace ends it at once, without a disconnect', async () => {
  disconnects.length = 0;
  const tenantId = randomUUID();
  const handle = await temporal.client.workflow.start<typeof betaGrace>('betaGrace', {
    taskQueue: temporal.taskQueue,
    workflowId: `beta-grace-${tenantId}`,
    args: [{ tenant_id: tenantId, grace_ends_at: new Date(Date.now() + GRACE_MS).toISOString(), grace_ms: GRACE_MS }],
  });
  await handle.signal('license-changed');
  expect(await handle.result()).toEqual({ outcome: 'licensed' });
  expect(disconnects).toEqual([]);
});
