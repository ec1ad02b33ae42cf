import { randomUUID } from 'node:crypto';
import type { LicenseActivities } from '../../activities/license';
import type { DisconnectTenantInput } from '../../core/license/licenseWorkflows';
import type { Disconnection } from '../../core/license/store';
import type { autoDisconnect } from '../../workflows/autoDisconnect';
import { licenseChangedSignal, type betaGrace } from '../../workflows/betaGrace';
import { useStubWorker } from '../support/stubWorker';

// The Beta grace and auto-disconnect workflows on the real dev server with stub activities: the
// calls they make are recorded in memory, and each test decides which tenants are past their
// grace and what a disconnect finds. No database, no HTTP.

const calls: DisconnectTenantInput[] = [];
let pastGrace: string[] = [];
const found = (tenantId: string): Disconnection => ({
  kept: `${tenantId}-kept`,
  revoked: [`${tenantId}-a`, `${tenantId}-b`],
});

const stubs: LicenseActivities = {
  async listTenantsPastBetaGrace() {
    return pastGrace;
  },
  async disconnectTenant(input) {
    calls.push(input);
    return found(input.tenant_id);
  },
};

const stub = useStubWorker('license-wf-test', stubs);
const { taskQueue } = stub;

jest.setTimeout(20_000);

beforeEach(() => {
  calls.length = 0;
  pastGrace = [];
});

const startGrace = (tenantId: string, endsInMs: number) =>
  stub.client.workflow.start<typeof betaGrace>('betaGrace', {
    taskQueue,
    workflowId: `beta-grace-test-${randomUUID()}`,
    args: [{ tenant_id: tenantId, grace_ends_at: new Date(Date.now() + endsInMs).toISOString(), grace_ms: 5_000 }],
  });

test('a license change during the grace ends it without disconnecting anything', async () => {
  const handle = await startGrace(randomUUID(), 60_000);
  await handle.signal(licenseChangedSignal);
  expect(await handle.result()).toEqual({ outcome: 'licensed' });
  expect(calls).toEqual([]);
});

test('when the grace runs out, the tenant is disconnected once, with the grace to check again', async () => {
  const tenantId = randomUUID();
  const handle = await startGrace(tenantId, 1_000);
  expect(await handle.result()).toEqual({ outcome: 'disconnected', disconnection: found(tenantId) });
  expect(calls).toEqual([{ tenant_id: tenantId, grace_ms: 5_000 }]);
  const { events } = await handle.fetchHistory();
  expect(events!.filter((e) => e.timerStartedEventAttributes).length).toBe(1);
});

test('a grace whose end has already passed (a worker long down) disconnects at once', async () => {
  const tenantId = randomUUID();
  const handle = await startGrace(tenantId, -60_000);
  expect(await handle.result()).toMatchObject({ outcome: 'disconnected' });
  expect(calls.map((call) => call.tenant_id)).toEqual([tenantId]);
});

test('auto-disconnect disconnects each tenant past its grace, one after the other, and counts what it revoked', async () => {
  pastGrace = [randomUUID(), randomUUID(), randomUUID()];
  const result = await stub.client.workflow.execute<typeof autoDisconnect>('autoDisconnect', {
    taskQueue,
    workflowId: `auto-disconnect-test-${randomUUID()}`,
    args: [{ grace_ms: 7_000 }],
  });
  expect(result).toEqual({ tenants: 3, revoked: 6 });
  expect(calls).toEqual(pastGrace.map((tenant_id) => ({ tenant_id, grace_ms: 7_000 })));
});

test('auto-disconnect with no tenant past its grace does nothing', async () => {
  const result = await stub.client.workflow.execute<typeof autoDisconnect>('autoDisconnect', {
    taskQueue,
    workflowId: `auto-disconnect-test-${randomUUID()}`,
    args: [{ grace_ms: 7_000 }],
  });
  expect(result).toEqual({ tenants: 0, revoked: 0 });
  expect(calls).toEqual([]);
});
