import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import type { ScorecardActivities } from '../../activities/scorecards';
import type { ScoreTenantInput } from '../../core/scorecards/scorecardWorkflows';
import { scorecardsQueuedSignal, type initiativeDeadlines, type scoreTenant } from '../../workflows/scorecards';
import { useStubWorker } from '../support/stubWorker';
import { WORKFLOW_BUNDLE_PATH } from '../support/testEnv';

// The scorecard workflows on the real dev server with stub activities: each test scripts what
// the queue and the entity pages hold and reads back the calls the workflow made, in order.

type Call = { activity: string; tenant_id?: string; after_id?: string | null };
const calls: Call[] = [];
/** Whether each scoreQueued call ran as a local activity, in order. */
const queuedBatchesLocal: boolean[] = [];
let queued: { full: boolean; more: boolean }[] = [];
let pages: (string | null)[] = [];
let dueTenants: string[] = [];
/** When set, a page read waits on it: a test acts while a full pass is mid-way. */
let beforeRange: ((afterId: string | null) => Promise<void>) | undefined;

const stubs: ScorecardActivities = {
  async scoreQueued(input) {
    calls.push({ activity: 'scoreQueued', tenant_id: input.tenant_id });
    queuedBatchesLocal.push(Context.current().info.isLocal);
    return { scored: 1, ...(queued.shift() ?? { full: false, more: false }) };
  },
  async scoreRange(input) {
    calls.push({ activity: 'scoreRange', tenant_id: input.tenant_id, after_id: input.after_id });
    await beforeRange?.(input.after_id);
    return { scored: 2, last_id: pages.shift() ?? null };
  },
  async queueRescoreOfEveryTenant() {
    calls.push({ activity: 'queueRescoreOfEveryTenant' });
    return 3;
  },
  async listTenantsWithDueInitiatives() {
    return dueTenants;
  },
  async openInitiativeActions(input) {
    calls.push({ activity: 'openInitiativeActions', tenant_id: input.tenant_id });
    return { initiatives: 1, actions: 2 };
  },
};

const stub = useStubWorker('scorecards-wf-test', stubs);
const { taskQueue } = stub;

jest.setTimeout(20_000);

beforeEach(() => {
  calls.length = 0;
  queuedBatchesLocal.length = 0;
  queued = [];
  pages = [];
  dueTenants = [];
  beforeRange = undefined;
});

const input = (tenantId: string, idleMs = 200): ScoreTenantInput => ({
  tenant_id: tenantId,
  batch_size: 2,
  idle_ms: idleMs,
});
const start = (tenantId: string, idleMs?: number) =>
  stub.client.workflow.start<typeof scoreTenant>('scoreTenant', {
    taskQueue,
    workflowId: `scorecards-test-${randomUUID()}`,
    args: [input(tenantId, idleMs)],
  });

test('a queue that keeps filling is scored with every fifth batch a regular activity, so the workflow task ends and a stopping worker is not held by local activities', async () => {
  const tenantId = randomUUID();
  queued = Array.from({ length: 11 }, (_, i) => ({ full: false, more: i < 10 }));
  await (await start(tenantId)).result();
  expect(queuedBatchesLocal).toEqual([true, true, true, true, false, true, true, true, true, false, true]);
});

test('queued work is scored batch after batch until none is left, then the run ends when idle', async () => {
  const tenantId = randomUUID();
  queued = [
    { full: false, more: true },
    { full: false, more: true },
    { full: false, more: false },
  ];
  await (await start(tenantId)).result();
  expect(calls).toEqual([
    { activity: 'scoreQueued', tenant_id: tenantId },
    { activity: 'scoreQueued', tenant_id: tenantId },
    { activity: 'scoreQueued', tenant_id: tenantId },
  ]);
});

test('a full request walks every page in id order, from the start to the last', async () => {
  const tenantId = randomUUID();
  queued = [{ full: true, more: false }];
  pages = ['id-2', 'id-4', null];
  await (await start(tenantId)).result();
  expect(calls.map((call) => `${call.activity}:${call.after_id ?? ''}`)).toEqual([
    'scoreQueued:',
    'scoreRange:',
    'scoreRange:id-2',
    'scoreRange:id-4',
  ]);
});

test('a change during a full pass is served within a batch or two, and a second full request restarts the pass', async () => {
  const tenantId = randomUUID();
  // A long idle wait: the run stays up to receive the signals.
  const handle = await start(tenantId, 60_000);
  await waitFor(() => calls.length === 1);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  beforeRange = (afterId) => (afterId === 'id-2' ? gate : Promise.resolve());
  queued = [{ full: true, more: false }];
  pages = ['id-2', 'id-4', null];
  await handle.signal(scorecardsQueuedSignal);
  // The pass is mid-way (its second page is being read) when a rule changes again.
  await waitFor(() => calls.some((call) => call.after_id === 'id-2'));
  queued = [{ full: true, more: false }];
  await handle.signal(scorecardsQueuedSignal);
  release();
  const named = () => calls.map((call) => `${call.activity}:${call.after_id ?? ''}`);
  const restarted = () => named().slice(4).join(' ').includes('scoreQueued: scoreRange:');
  await waitFor(restarted);
  await handle.terminate();
  // The change is served within a batch or two (the batches run as local activities, so the
  // signal is seen once the current workflow task ends), and the pass starts again from the
  // beginning, not from where it was.
  expect(named().slice(0, 4)).toEqual(['scoreQueued:', 'scoreQueued:', 'scoreRange:', 'scoreRange:id-2']);
  expect(named().indexOf('scoreQueued:', 4)).toBeLessThanOrEqual(5);
  expect(restarted()).toBe(true);
});

test('a full pass costs one activity per batch of entities, not one per entity', async () => {
  const tenantId = randomUUID();
  queued = [{ full: true, more: false }];
  pages = [randomUUID(), null];
  const handle = await start(tenantId);
  await handle.result();
  const { events } = await handle.fetchHistory();
  // Local activities: one marker each in the history (a patch marker is another kind).
  const batches = events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  expect(batches.length).toBe(3);
});

test('the nightly run queues a full re-score of every tenant; the deadline run opens each due tenant once', async () => {
  expect(
    await stub.client.workflow.execute('rescoreAllTenants', { taskQueue, workflowId: `rescore-test-${randomUUID()}` }),
  ).toEqual({
    tenants: 3,
  });
  dueTenants = [randomUUID(), randomUUID()];
  const result = await stub.client.workflow.execute<typeof initiativeDeadlines>('initiativeDeadlines', {
    taskQueue,
    workflowId: `deadlines-test-${randomUUID()}`,
  });
  expect(result).toEqual({ initiatives: 2, actions: 4 });
  expect(calls.filter((call) => call.activity === 'openInitiativeActions').map((call) => call.tenant_id)).toEqual(
    dueTenants,
  );
});

// A tenant's run lives on across deployments (woken again and again until idle): a change of its
// commands would stall it on a determinism error. Recorded from the code that first shipped (plain
// payloads): a full pass of seven pages with queued work in its first two rounds, its fifth batch
// a regular activity.
test('a scoreTenant run recorded from the first version replays without a determinism error', async () => {
  const fixture = 'scoreTenant-v1.history.bin';
  await Worker.runReplayHistory(
    { workflowBundle: { code: await readFile(WORKFLOW_BUNDLE_PATH, 'utf8') } },
    temporal.api.history.v1.History.decode(await readFile(path.join(__dirname, '..', 'fixtures', fixture))),
    fixture,
  );
});

async function waitFor(done: () => boolean, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > until) throw new Error(`not reached: ${JSON.stringify(calls)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
