import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { IntegrationSyncActivities } from '../../activities/integrationSync';
import type { IntegrationSyncResult, SyncTickPage } from '../../core/integrations/syncControl';
import type { SyncTarget } from '../../core/integrations/syncRules';
import type { integrationSync, integrationSyncTick } from '../../workflows/integrationSync';
import { useStubWorker } from '../support/stubWorker';

// The sync workflows on the real Temporal server with stub activities: a sync that fails inside
// Shipyard is recorded, and the schedule's tick starts one sync per integration (round-robin
// order as the activity gives it), leaves one already running to itself and pages on.

type Stubs = Pick<IntegrationSyncActivities, 'syncIntegration' | 'recordSyncGaveUp' | 'integrationsToSync'>;

const synced: string[] = [];
const gaveUp: string[] = [];
const offsets: number[] = [];
let pages: Record<number, SyncTickPage> = {};
let failing = new Set<string>();
/** Integrations whose sync waits for this before it answers. */
let held = new Map<string, Promise<void>>();

const stubs: Stubs = {
  async syncIntegration({ integrationId }): Promise<IntegrationSyncResult> {
    await held.get(integrationId);
    if (failing.has(integrationId)) throw ApplicationFailure.nonRetryable('relation "incidents" does not exist');
    synced.push(integrationId);
    return { status: 'active', counts: { incidents: 1 } };
  },
  async recordSyncGaveUp({ integrationId }) {
    gaveUp.push(integrationId);
  },
  async integrationsToSync({ offset }) {
    offsets.push(offset);
    return pages[offset] ?? { syncs: [], nextOffset: null };
  },
};

const stub = useStubWorker('integration-sync-wf-test', stubs);
jest.setTimeout(30_000);

beforeEach(() => {
  synced.length = 0;
  gaveUp.length = 0;
  offsets.length = 0;
  pages = {};
  failing = new Set();
  held = new Map();
});

const target = (tenantId = randomUUID()): SyncTarget => ({ tenantId, integrationId: randomUUID() });
const page = (targets: SyncTarget[], nextOffset: number | null = null): SyncTickPage => ({
  syncs: targets.map((t) => ({ target: t, workflowId: `integration-sync-${t.integrationId}` })),
  nextOffset,
});
const runTick = async () =>
  (
    await stub.client.workflow.start<typeof integrationSyncTick>('integrationSyncTick', {
      taskQueue: stub.taskQueue,
      workflowId: `sync-tick-test-${randomUUID()}`,
      args: [],
    })
  ).result();

test('a sync answers what the activity found', async () => {
  const one = target();
  const result = await stub.client.workflow.execute<typeof integrationSync>('integrationSync', {
    taskQueue: stub.taskQueue,
    workflowId: `integration-sync-${one.integrationId}`,
    args: [one],
  });
  expect(result).toEqual({ status: 'active', counts: { incidents: 1 } });
  expect(gaveUp).toEqual([]);
});

test('a sync that fails inside Shipyard past its retries is recorded on the integration, not left claiming success', async () => {
  const one = target();
  failing.add(one.integrationId);
  const result = await stub.client.workflow.execute<typeof integrationSync>('integrationSync', {
    taskQueue: stub.taskQueue,
    workflowId: `integration-sync-${one.integrationId}`,
    args: [one],
  });
  expect(result).toEqual({ status: 'error', counts: {} });
  expect(gaveUp).toEqual([one.integrationId]);
});

test('the tick starts a sync per integration under its own id, and leaves one already running to itself', async () => {
  const targets = [target(), target(), target(), target(), target()];
  let release!: () => void;
  held.set(targets[0].integrationId, new Promise<void>((resolve) => (release = resolve)));
  // A POST's sync of the first integration is running when the tick comes.
  const running = await stub.client.workflow.start<typeof integrationSync>('integrationSync', {
    taskQueue: stub.taskQueue,
    workflowId: `integration-sync-${targets[0].integrationId}`,
    args: [targets[0]],
  });
  pages = { 0: page(targets) };
  const result = await runTick();
  expect(result).toEqual({ integrations: 5, synced: 4, already_running: 1, failed: 0 });
  expect(synced.sort()).toEqual(
    targets
      .slice(1)
      .map((t) => t.integrationId)
      .sort(),
  );
  for (const t of targets.slice(1)) {
    const description = await stub.client.workflow.getHandle(`integration-sync-${t.integrationId}`).describe();
    expect(description.status.name).toBe('COMPLETED');
  }
  release();
  await running.result();
});

test('the tick continues as new page after page until the list ends', async () => {
  const first = [target(), target()];
  const second = [target()];
  pages = { 0: page(first, 2), 2: page(second) };
  // The result is the last run's, after continuing as new.
  expect(await runTick()).toEqual({ integrations: 1, synced: 1, already_running: 0, failed: 0 });
  expect(offsets).toEqual([0, 2]);
  expect(synced.sort()).toEqual([...first, ...second].map((t) => t.integrationId).sort());
});
