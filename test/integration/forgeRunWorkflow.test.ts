import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import path from 'node:path';
import type { ForgeActivities } from '../../activities/forge';
import { approveSignal, cancelSignal, rejectSignal, slotFreedSignal, type forgeRun } from '../../workflows/forgeRun';
import {
  ACTION_CONFIG_DEFAULTS,
  FORGE_RUN_VERSION,
  forgeWorkflowId,
  type ForgeRunInput,
  type MarkRunResult,
  type RunLimits,
  type RunStatus,
  type RunStepSpec,
  type SlotKind,
  type StepDecision,
  type StepStatus,
} from '../../core/forge/types';
import { until } from '../support/processes';
import { startStubWorker } from '../support/stubWorker';
import { WORKFLOW_BUNDLE_PATH } from '../support/testEnv';

// The forge run workflow on the real dev server (this config's namespace), run by a real worker
// on a task queue of its own, with stub activities: every status write, step write and log line
// is recorded in memory, and each test decides what runAction does. No database, no HTTP. The
// action activity marks its own step running and completed (proved with real activities in
// forgeRuns.test.ts), so the step writes recorded here are the workflow's: approvals, failures.

type ActionInput = Parameters<ForgeActivities['runAction']>[0];
type MarkRunAnswer = Exclude<MarkRunResult, 'not-visible'>;

interface Recorded {
  runs: { status: RunStatus; error?: string; answer: MarkRunAnswer }[];
  steps: { position: number; status: StepStatus; error?: string; output?: unknown }[];
  openSteps: { fromPosition: number; status: StepStatus }[];
  logs: { position?: number; level?: string; message: string }[];
  actions: { position: number; attempt: number }[];
  /** Positions whose action saw the cancellation. */
  actionsCancelled: number[];
  /** Slot requests and releases, in order. */
  slots: { kind: SlotKind; op: 'acquire' | 'granted' | 'release' }[];
  /** How many exchanges of slots (local activities) the run made. */
  exchanges: number;
}

interface Script {
  /** What runAction does for this run; by default it succeeds at once. */
  action?: (input: ActionInput) => Promise<void>;
  /** What markRun answers for this run; by default 'written'. */
  markRun?: (status: RunStatus) => Promise<MarkRunAnswer>;
  /** Whether exchangeSlots grants this run's request of `kind`; by default it does. */
  grant?: (kind: SlotKind) => boolean;
  /** The workflows exchangeSlots names to wake when the run gives back a slot of `kind`; by default none. */
  wake?: (kind: SlotKind) => string[];
}

const recorded = new Map<string, Recorded>();
const scripts = new Map<string, Script>();

const recordOf = (runId: string): Recorded => {
  let entry = recorded.get(runId);
  if (!entry) {
    entry = {
      runs: [],
      steps: [],
      openSteps: [],
      logs: [],
      actions: [],
      actionsCancelled: [],
      slots: [],
      exchanges: 0,
    };
    recorded.set(runId, entry);
  }
  return entry;
};

const stubs: ForgeActivities = {
  async markRun({ runId, status, error }) {
    const answer = (await scripts.get(runId)?.markRun?.(status)) ?? 'written';
    recordOf(runId).runs.push({ status, ...(error !== undefined && { error }), answer });
    return answer;
  },
  async markStep({ runId, position, status, error, output }) {
    const extra = { ...(error !== undefined && { error }), ...(output !== undefined && { output }) };
    recordOf(runId).steps.push({ position, status, ...extra });
  },
  async markOpenSteps({ runId, fromPosition, status }) {
    recordOf(runId).openSteps.push({ fromPosition, status });
  },
  async appendLog({ runId, position, level, message }) {
    recordOf(runId).logs.push({ position, level, message });
  },
  // As the real activity: releases first, then requests in order up to the first refused.
  async exchangeSlots({ runId, release, acquire }) {
    const rec = recordOf(runId);
    const script = scripts.get(runId);
    rec.exchanges += 1;
    for (const kind of release) rec.slots.push({ kind, op: 'release' });
    const granted: SlotKind[] = [];
    for (const kind of acquire) {
      const grant = script?.grant?.(kind) ?? true;
      rec.slots.push({ kind, op: grant ? 'granted' : 'acquire' });
      if (!grant) break;
      granted.push(kind);
    }
    return { granted, wake: release.flatMap((kind) => script?.wake?.(kind) ?? []) };
  },
  async reconcileRuns() {
    return 0;
  },
  // As the real activity (forgeRuns.test.ts): the first action marks the run running and is
  // not executed when that answers already-finished; the last marks the run completed.
  async runAction(input) {
    if (input.startsRun && (await stubs.markRun({ ...input, status: 'running' })) === 'already-finished') {
      return 'already-finished';
    }
    recordOf(input.runId).actions.push({ position: input.step.position, attempt: Context.current().info.attempt });
    await scripts.get(input.runId)?.action?.(input);
    return input.completesRun ? stubs.markRun({ ...input, status: 'completed' }) : undefined;
  },
};

/** An action that heartbeats until the cancellation reaches it, then records that it did. */
async function hangUntilCancelled({ runId, step }: ActionInput): Promise<never> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), 50);
  try {
    return await context.cancelled;
  } catch (err) {
    recordOf(runId).actionsCancelled.push(step.position);
    throw err;
  } finally {
    clearInterval(beat);
  }
}

/** Waits on recorded state: polls `check` until it holds (no fixed sleeps). */
async function waitFor(what: string, check: () => boolean, seconds = 10): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${seconds}s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const taskQueue = `forge-run-wf-test-${randomUUID().slice(0, 8)}`;
let client: Client;
let closeWorker: (() => Promise<void>) | undefined;

jest.setTimeout(20_000);

beforeAll(async () => {
  ({ client, close: closeWorker } = await startStubWorker({
    taskQueue,
    activities: stubs,
    // Heartbeats carry the cancellation: sent at once rather than throttled to 8 s.
    maxHeartbeatThrottleInterval: '50 milliseconds',
  }));
}, 30_000);

afterAll(() => closeWorker?.());

const action = (position: number, config: Record<string, unknown> = {}): RunStepSpec => ({
  position,
  name: `step-${position}`,
  type: 'api-call',
  config: { ...ACTION_CONFIG_DEFAULTS['api-call'], timeout_seconds: 5, ...config },
  requiresApproval: false,
});
const approval = (position: number, approvalTimeout?: string): RunStepSpec => ({
  position,
  name: `approve-${position}`,
  type: 'approval',
  config: {},
  requiresApproval: false,
  ...(approvalTimeout && { approvalTimeout }),
});

/** As the API's defaults, but for the recheck: a waiting run is woken by the signal in these tests. */
const LIMITS: RunLimits = { stepBudgetSeconds: 1800, slotRecheckSeconds: 600 };

function runOf(steps: RunStepSpec[], script: Script = {}, limits: RunLimits = LIMITS) {
  const input: ForgeRunInput = {
    tenantId: randomUUID(),
    runId: randomUUID(),
    steps,
    version: FORGE_RUN_VERSION,
    limits,
  };
  scripts.set(input.runId, script);
  return { input, workflowId: forgeWorkflowId(input.runId), rec: recordOf(input.runId) };
}

const start = (input: ForgeRunInput): Promise<WorkflowHandle<typeof forgeRun>> =>
  client.workflow.start<typeof forgeRun>('forgeRun', {
    taskQueue,
    workflowId: forgeWorkflowId(input.runId),
    args: [input],
  });

const runStatuses = (rec: Recorded) => rec.runs.map((r) => r.status);
const stepsAt = (rec: Recorded, position: number) => rec.steps.filter((s) => s.position === position);

test('three actions run in order, once each: run running then completed; the workflow writes no marks of its own (the first and last actions mark the run), only its slots: the run slot around the run, an action slot around each action, in one exchange at each boundary', async () => {
  const { input, rec } = runOf([action(0), action(1), action(2)]);
  const handle = await start(input);
  await handle.result();

  expect(runStatuses(rec)).toEqual(['running', 'completed']);
  const { events } = await handle.fetchHistory();
  const localActivities = events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  const actionSlot = [
    { kind: 'action', op: 'granted' },
    { kind: 'action', op: 'release' },
  ];
  expect(rec.slots).toEqual([
    { kind: 'run', op: 'granted' },
    ...actionSlot,
    ...actionSlot,
    ...actionSlot,
    { kind: 'run', op: 'release' },
  ]);
  expect(rec.exchanges).toBe(4);
  expect(localActivities).toHaveLength(rec.exchanges);
  expect(rec.actions).toEqual([0, 1, 2].map((position) => ({ position, attempt: 1 })));
  expect(rec.steps).toEqual([]);
  expect(rec.openSteps).toEqual([]);
});

/** The details of each patch marker in a history (the SDK core writes them in plain JSON). */
const patchMarkers = (events: temporal.api.history.v1.IHistoryEvent[]) =>
  events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details!).flatMap((details) =>
      details.payloads!.map((payload) => JSON.parse(Buffer.from(payload.data!).toString('utf8')) as unknown),
    );
  });

test('a run naming its version records no patch marker, and one started without it (by an API before runs carried it) decides by both patch markers and runs the same way', async () => {
  const versioned = runOf([action(0), action(1)]);
  const unversioned = runOf([action(0), action(1)]);
  delete unversioned.input.version;
  delete unversioned.input.limits;
  const [versionedHistory, unversionedHistory] = await Promise.all(
    [versioned, unversioned].map(async ({ input }) => {
      const handle = await start(input);
      await handle.result();
      return (await handle.fetchHistory()).events!;
    }),
  );

  expect(patchMarkers(versionedHistory)).toEqual([]);
  expect(patchMarkers(unversionedHistory)).toEqual([
    { id: 'action-marks-its-step', deprecated: false },
    { id: 'action-marks-run', deprecated: false },
  ]);
  for (const { rec } of [versioned, unversioned]) {
    expect(runStatuses(rec)).toEqual(['running', 'completed']);
    expect(rec.actions).toEqual([0, 1].map((position) => ({ position, attempt: 1 })));
    expect(rec.steps).toEqual([]);
  }
});

test('an approve that arrives before the workflow reaches the approval step still counts: the run completes', async () => {
  const { input, workflowId, rec } = runOf([approval(0), action(1)]);
  // With the start itself: the approve is in the first workflow task, before any step has begun.
  const handle = await client.workflow.signalWithStart<typeof forgeRun, [StepDecision]>('forgeRun', {
    taskQueue,
    workflowId,
    args: [input],
    signal: approveSignal,
    signalArgs: [{ actor: 'alice', position: 0 }],
  });
  await handle.result();

  expect(runStatuses(rec)).toEqual(['running', 'awaiting_approval', 'running', 'completed']);
  expect(rec.logs).toEqual([{ position: 0, message: 'approved by alice' }]);
  expect(stepsAt(rec, 0).map((s) => s.status)).toEqual(['awaiting_approval', 'completed']);
  expect(stepsAt(rec, 1)).toEqual([]);
  expect(rec.actions).toEqual([{ position: 1, attempt: 1 }]);
});

test('reject ends the run failed "rejected by <actor>", the approval step failed, later steps skipped, no later action runs', async () => {
  const { input, rec } = runOf([action(0), approval(1), action(2)]);
  const handle = await start(input);
  await waitFor('the approval step waiting', () => stepsAt(rec, 1).some((s) => s.status === 'awaiting_approval'));
  await handle.signal(rejectSignal, { actor: 'bob', comment: 'not today', position: 1 });
  await handle.result();

  expect(rec.runs.at(-1)).toEqual({ status: 'failed', error: 'rejected by bob', answer: 'written' });
  expect(runStatuses(rec)).not.toContain('completed');
  expect(stepsAt(rec, 1).at(-1)).toEqual({ position: 1, status: 'failed', error: 'rejected' });
  expect(rec.openSteps).toEqual([{ fromPosition: 2, status: 'skipped' }]);
  expect(rec.logs).toEqual([{ position: 1, message: 'rejected by bob: not today' }]);
  expect(rec.actions).toEqual([{ position: 0, attempt: 1 }]);
  expect(stepsAt(rec, 2)).toEqual([]);
});

test('retries exhausted: a retryable failure every time with max_attempts 2 is tried exactly twice, then the step and run fail', async () => {
  const { input, rec } = runOf([action(0, { max_attempts: 2 }), action(1)], {
    action: async () => {
      throw ApplicationFailure.retryable('upstream answered 503', 'HttpStatus');
    },
  });
  await (await start(input)).result();

  expect(rec.actions).toEqual([
    { position: 0, attempt: 1 },
    { position: 0, attempt: 2 },
  ]);
  expect(stepsAt(rec, 0)).toEqual([{ position: 0, status: 'failed', error: 'upstream answered 503' }]);
  expect(rec.openSteps).toEqual([{ fromPosition: 1, status: 'skipped' }]);
  expect(rec.runs.at(-1)).toEqual({
    status: 'failed',
    error: 'step "step-0" failed: upstream answered 503',
    answer: 'written',
  });
  expect(stepsAt(rec, 1)).toEqual([]);
});

describe('cancel racing the last action', () => {
  test('the cancel signal arrives while the last action runs and it then succeeds: the run ends cancelled, never completed', async () => {
    let cancelCommitted = false;
    const { input, workflowId, rec } = runOf([action(0), action(1)], {
      action: async ({ step }) => {
        if (step.position !== 1) return;
        // As the API does: the cancel is committed (the action's completion write then sees it), then signalled.
        cancelCommitted = true;
        await client.workflow.getHandle(workflowId).signal(cancelSignal, { actor: 'carol' });
      },
      markRun: async (status) => (status === 'completed' && cancelCommitted ? 'cancel-accepted' : 'written'),
    });
    await (await start(input)).result();

    // Which of the two the workflow sees first (the signal, or the action's result) is the race:
    // either way the run ends cancelled. The bookkeeping may be written twice when the workflow
    // task that handled the signal is refused for the result that arrived meanwhile (local
    // activities are at least once), so only the ending is asserted here.
    expect(rec.actions.map((a) => a.position)).toEqual([0, 1]);
    expect(rec.runs.filter((run) => run.status === 'completed' && run.answer === 'written')).toEqual([]);
    expect(rec.runs.at(-1)).toEqual({ status: 'cancelled', answer: 'written' });
    expect(rec.logs.at(-1)).toEqual({ level: 'warn', message: 'cancelled by carol' });
    expect(rec.openSteps.length).toBeGreaterThan(0);
    expect(rec.openSteps.every((open) => open.status === 'cancelled')).toBe(true);
  });

  test("the API accepted a cancel as the last action ended (markRun('completed') answers cancel-accepted): the run ends cancelled", async () => {
    const { input, workflowId, rec } = runOf([action(0), action(1)], {
      // As the API does: the cancel is committed (markRun sees it), then its signal is sent.
      markRun: async (status) => {
        if (status !== 'completed') return 'written';
        setTimeout(
          () => void client.workflow.getHandle(workflowId).signal(cancelSignal, { actor: 'dave', comment: 'too late' }),
          200,
        );
        return 'cancel-accepted';
      },
    });
    await (await start(input)).result();

    expect(rec.runs).toEqual([
      { status: 'running', answer: 'written' },
      { status: 'completed', answer: 'cancel-accepted' },
      { status: 'cancelled', answer: 'written' },
    ]);
    expect(rec.logs).toEqual([{ level: 'warn', message: 'cancelled by dave: too late' }]);
    // Every step had ended: nothing left to mark.
    expect(rec.openSteps).toEqual([{ fromPosition: 2, status: 'cancelled' }]);
    expect(rec.actions.map((a) => a.position)).toEqual([0, 1]);
  });
});

test('cancel during a hanging action: the action sees the cancellation, the run ends cancelled, remaining steps cancelled', async () => {
  const { input, rec } = runOf([action(0), action(1), action(2)], {
    action: async (actionInput) => {
      if (actionInput.step.position === 1) await hangUntilCancelled(actionInput);
    },
  });
  const handle = await start(input);
  await waitFor('the second action running', () => rec.actions.some((a) => a.position === 1));
  await handle.signal(cancelSignal, { actor: 'erin' });
  await handle.result();
  await waitFor('the action seeing the cancellation', () => rec.actionsCancelled.includes(1));

  expect(runStatuses(rec)).toEqual(['running', 'cancelled']);
  expect(rec.openSteps).toEqual([{ fromPosition: 1, status: 'cancelled' }]);
  expect(rec.logs).toEqual([{ level: 'warn', message: 'cancelled by erin' }]);
  expect(stepsAt(rec, 1)).toEqual([]);
  expect(rec.actions.map((a) => a.position)).toEqual([0, 1]);
});

test('a cancel the API withdrew (its signal could not be sent) does not hold the run: the workflow looks again and ends as it was going to', async () => {
  let looks = 0;
  const { input, rec } = runOf([action(0)], {
    markRun: async (status) => (status === 'completed' && ++looks === 1 ? 'cancel-accepted' : 'written'),
  });
  await (await start(input)).result();
  expect(rec.runs).toEqual([
    { status: 'running', answer: 'written' },
    { status: 'completed', answer: 'cancel-accepted' },
    { status: 'completed', answer: 'written' },
  ]);
  expect(rec.logs).toEqual([]);
}, 30_000);

test('a run the API already ended (its workflow start seemed to fail) is not executed: the first write answers already-finished', async () => {
  const { input, rec } = runOf([action(0)], {
    markRun: async (status) => (status === 'running' ? 'already-finished' : 'written'),
  });
  await (await start(input)).result();
  expect(rec.runs).toEqual([{ status: 'running', answer: 'already-finished' }]);
  expect(rec.actions).toEqual([]);
});

describe('slots (version 4)', () => {
  const timersStarted = async (handle: WorkflowHandle) =>
    (await handle.fetchHistory()).events!.filter((e) => e.timerStartedEventAttributes).length;

  test('a run whose tenant has no action slot free waits in the workflow (a timer, no activity running) until a slot-freed signal, then runs its action', async () => {
    let free = false;
    const { input, rec } = runOf([action(0)], { grant: (kind) => kind === 'run' || free });
    const handle = await start(input);
    await waitFor('the action slot refused', () => rec.slots.some((s) => s.kind === 'action' && s.op === 'acquire'));
    await until('the run waiting on its timer', 10, async () => (await timersStarted(handle)) === 1 || undefined);
    expect(rec.actions).toEqual([]);

    free = true;
    await handle.signal(slotFreedSignal);
    await handle.result();
    expect(rec.actions).toEqual([{ position: 0, attempt: 1 }]);
    expect(rec.slots).toEqual([
      { kind: 'run', op: 'granted' },
      { kind: 'action', op: 'acquire' },
      { kind: 'action', op: 'granted' },
      { kind: 'action', op: 'release' },
      { kind: 'run', op: 'release' },
    ]);
    expect(runStatuses(rec)).toEqual(['running', 'completed']);
  });

  test('a run waiting for an approval holds no run slot: it gives it back at the wait and queues for one again once approved', async () => {
    const { input, rec } = runOf([action(0), approval(1), action(2)]);
    const handle = await start(input);
    await waitFor('the approval step waiting', () => stepsAt(rec, 1).some((s) => s.status === 'awaiting_approval'));
    await waitFor('the run slot given back', () => rec.slots.filter((s) => s.kind === 'run').length === 2);
    await handle.signal(approveSignal, { actor: 'grace', position: 1 });
    await handle.result();
    expect(rec.slots.filter((s) => s.kind === 'run').map((s) => s.op)).toEqual([
      'granted',
      'release',
      'granted',
      'release',
    ]);
    expect(runStatuses(rec)).toEqual(['running', 'awaiting_approval', 'running', 'completed']);
  });

  test('without a signal, a waiting run looks again when its recheck timer fires', async () => {
    let asked = 0;
    const { input, rec } = runOf(
      [action(0)],
      { grant: (kind) => kind === 'action' || ++asked > 1 },
      {
        ...LIMITS,
        slotRecheckSeconds: 1,
      },
    );
    await (await start(input)).result();
    expect(rec.slots.slice(0, 2)).toEqual([
      { kind: 'run', op: 'acquire' },
      { kind: 'run', op: 'granted' },
    ]);
    expect(runStatuses(rec)).toEqual(['running', 'completed']);
  });

  test('a run queued for its run slot and cancelled there ends cancelled without running anything, and withdraws its request', async () => {
    const { input, rec } = runOf([action(0), action(1)], { grant: () => false });
    const handle = await start(input);
    await waitFor('the run slot refused', () => rec.slots.length > 0);
    await handle.signal(cancelSignal, { actor: 'frank' });
    await handle.result();
    expect(rec.actions).toEqual([]);
    expect(runStatuses(rec)).toEqual(['cancelled']);
    expect(rec.openSteps).toEqual([{ fromPosition: 0, status: 'cancelled' }]);
    expect(rec.slots).toEqual([
      { kind: 'run', op: 'acquire' },
      { kind: 'run', op: 'release' },
      { kind: 'action', op: 'release' },
    ]);
  });

  test('a run giving its run slot back signals the runs the release names, which then take it at once', async () => {
    const waiting = runOf([action(0)], { grant: (kind) => kind === 'action' || waitingMayRun });
    let waitingMayRun = false;
    const waitingHandle = await start(waiting.input);
    await waitFor('the second run queued', () => waiting.rec.slots.length > 0);

    const first = runOf([action(0)], {
      wake: (kind) => {
        if (kind !== 'run') return [];
        waitingMayRun = true;
        return [forgeWorkflowId(waiting.input.runId)];
      },
    });
    await (await start(first.input)).result();
    // Its recheck is ten minutes away: only the signal can have woken it.
    await waitingHandle.result();
    expect(waiting.rec.actions).toEqual([{ position: 0, attempt: 1 }]);
  });

  test("a step's attempts share its budget (Temporal's schedule-to-close): a step retried on every failure fails when the budget is spent, not after its ten attempts", async () => {
    const { input, rec } = runOf(
      [action(0, { max_attempts: 10 })],
      {
        action: async () => {
          throw ApplicationFailure.retryable('upstream answered 503', 'HttpStatus');
        },
      },
      { ...LIMITS, stepBudgetSeconds: 2 },
    );
    await (await start(input)).result();
    expect(rec.actions.length).toBeGreaterThan(1);
    expect(rec.actions.length).toBeLessThan(10);
    expect(rec.runs.at(-1)).toMatchObject({
      status: 'failed',
      error: `step "step-0" failed: upstream answered 503 (its attempts took the step's budget of 2 s)`,
    });
    expect(rec.slots.at(-1)).toEqual({ kind: 'run', op: 'release' });
  });
});

test('a run of version 4 carries no parameters in its history: its actions read them from the run', async () => {
  const { input, rec } = runOf([action(0)]);
  let actionInput: ActionInput | undefined;
  scripts.set(input.runId, {
    action: async (given) => {
      actionInput = given;
    },
  });
  await (await start(input)).result();
  expect(rec.actions).toHaveLength(1);
  expect(input).not.toHaveProperty('parameters');
  expect(actionInput).not.toHaveProperty('parameters');
});

describe('approval timeouts (version 5)', () => {
  test('an approval undecided when its timeout passes fails the step and the run with the reason; later steps are skipped and no action runs', async () => {
    const { input, rec } = runOf([approval(0, '1 second'), action(1)]);
    const handle = await start(input);
    await handle.result();

    expect(stepsAt(rec, 0).map((s) => s.status)).toEqual(['awaiting_approval', 'failed']);
    expect(stepsAt(rec, 0).at(-1)).toEqual({ position: 0, status: 'failed', error: 'not approved within 1 second' });
    expect(rec.openSteps).toEqual([{ fromPosition: 1, status: 'skipped' }]);
    expect(rec.runs.at(-1)).toEqual({
      status: 'failed',
      error: 'step "approve-0" was not approved within 1 second',
      answer: 'written',
    });
    expect(rec.logs).toEqual([{ position: 0, level: 'warn', message: 'approve-0: not approved within 1 second' }]);
    expect(rec.actions).toEqual([]);
    const { events } = await handle.fetchHistory();
    expect(events!.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
  });

  test('an approval decided before its timeout resumes the run as without one', async () => {
    const { input, rec } = runOf([approval(0, '1 hour'), action(1)]);
    const handle = await start(input);
    await waitFor('the approval step waiting', () => stepsAt(rec, 0).some((s) => s.status === 'awaiting_approval'));
    await handle.signal(approveSignal, { actor: 'alice', position: 0 });
    await handle.result();
    expect(runStatuses(rec).at(-1)).toBe('completed');
    expect(rec.actions).toEqual([{ position: 1, attempt: 1 }]);
  });

  test('a run of version 4 ignores an approval timeout (none of its runs had one): it waits for the decision', async () => {
    const { input, rec } = runOf([approval(0, '1 second'), action(1)]);
    input.version = 4;
    const handle = await start(input);
    await waitFor('the approval step waiting', () => stepsAt(rec, 0).some((s) => s.status === 'awaiting_approval'));
    await handle.signal(approveSignal, { actor: 'alice', position: 0 });
    await handle.result();
    expect(runStatuses(rec).at(-1)).toBe('completed');
    const { events } = await handle.fetchHistory();
    expect(events!.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
  });

  test('the timer survives its worker: stopped while the run waits, the timeout passes with no worker, and a new worker ends the run failed', async () => {
    const queue = `${taskQueue}-restart`;
    const first = await startStubWorker({ taskQueue: queue, activities: stubs });
    const { input, rec } = runOf([approval(0, '3 seconds'), action(1)]);
    const handle = await first.client.workflow.start<typeof forgeRun>('forgeRun', {
      taskQueue: queue,
      workflowId: forgeWorkflowId(input.runId),
      args: [input],
    });
    await waitFor('the approval step waiting', () => stepsAt(rec, 0).some((s) => s.status === 'awaiting_approval'));
    await first.close();
    // Past the timeout with no worker polling: the timer is the server's, and fires regardless.
    await until('the timer to fire on the server', 15, async () => {
      const { events } = await client.workflow.getHandle(handle.workflowId).fetchHistory();
      return events!.some((e) => e.timerFiredEventAttributes) ? true : undefined;
    });
    expect(runStatuses(rec)).not.toContain('failed');

    const second = await startStubWorker({ taskQueue: queue, activities: stubs });
    try {
      await client.workflow.getHandle(handle.workflowId).result();
    } finally {
      await second.close();
    }
    expect(rec.runs.at(-1)).toEqual({
      status: 'failed',
      error: 'step "approve-0" was not approved within 3 seconds',
      answer: 'written',
    });
    expect(rec.actions).toEqual([]);
  });
});

// Each history was recorded from that code (two api-call steps, plain payloads); a replay fails
// on any command the current code would issue differently at that point of the history.
const replay = async (fixture: string) =>
  Worker.runReplayHistory(
    { workflowBundle: { code: await readFile(WORKFLOW_BUNDLE_PATH, 'utf8') } },
    temporal.api.history.v1.History.decode(await readFile(path.join(__dirname, '..', 'fixtures', fixture))),
    fixture,
  );

test("a run started by the code before the action activity marked its own step replays without a determinism error (its history keeps the workflow's step marks)", async () => {
  await replay('forgeRun-workflow-marks-steps.history.bin');
});

test("a run started by the code before the first and last actions marked the run replays without a determinism error (its history keeps the workflow's run marks)", async () => {
  await replay('forgeRun-workflow-marks-run.history.bin');
});

test('a run of version 3 (it names its version in its input, and its history has no patch marker) replays without a determinism error', async () => {
  await replay('forgeRun-v3.history.bin');
});

test('a run of version 4 (it waited once for its run slot, then took an action slot per step) replays without a determinism error', async () => {
  await replay('forgeRun-v4.history.bin');
});

test('a run of version 5 (an approval decided in time, then one whose timeout fired) replays without a determinism error', async () => {
  await replay('forgeRun-v5.history.bin');
});
