import { randomUUID } from 'node:crypto';
import type { ForgeActivities } from '../../activities/forge';
import {
  ACTION_CONFIG_DEFAULTS,
  FORGE_RUN_VERSION,
  forgeWorkflowId,
  type ForgeRunInput,
  type RunStatus,
  type StepStatus,
} from '../../core/forge/types';
import type { forgeRun } from '../../workflows/forgeRun';
import { useTimeSkippingStubWorker } from '../support/stubWorker';

// A 72-hour approval timeout on Temporal's time-skipping test server (useTimeSkippingStubWorker),
// never by waiting: the server moves its clock to the timer as soon as no task is outstanding.
// The real workflow code runs, with stub activities.

jest.setTimeout(120_000);

const HOURS_72 = 72 * 3600;
const runs: { status: RunStatus; error?: string }[] = [];
const steps: { position: number; status: StepStatus; error?: string }[] = [];
const actions: number[] = [];
const stubs: ForgeActivities = {
  async markRun({ status, error }) {
    runs.push({ status, ...(error !== undefined && { error }) });
    return 'written';
  },
  async markStep({ position, status, error }) {
    steps.push({ position, status, ...(error !== undefined && { error }) });
  },
  async markOpenSteps() {},
  async appendLog() {},
  async exchangeSlots({ acquire }) {
    return { granted: acquire, wake: [] };
  },
  async reconcileRuns() {
    return 0;
  },
  async runAction({ step }) {
    actions.push(step.position);
    return undefined;
  },
};

const temporal = useTimeSkippingStubWorker('forge-approval-time-skipping', stubs);

test('an approval of a 72h timeout left undecided fails the run after 72 hours of the server clock, in seconds of real time: one 72 h timer, no later action', async () => {
  const input: ForgeRunInput = {
    tenantId: randomUUID(),
    runId: randomUUID(),
    version: FORGE_RUN_VERSION,
    limits: { stepBudgetSeconds: 1800, slotRecheckSeconds: 600 },
    steps: [
      { position: 0, name: 'sign-off', type: 'approval', config: {}, requiresApproval: false, approvalTimeout: '72h' },
      {
        position: 1,
        name: 'deploy',
        type: 'api-call',
        config: { ...ACTION_CONFIG_DEFAULTS['api-call'], url: 'http://deploy.invalid' },
        requiresApproval: false,
      },
    ],
  };
  const startedAt = Date.now();
  const handle = await temporal.client.workflow.start<typeof forgeRun>('forgeRun', {
    taskQueue: temporal.taskQueue,
    workflowId: forgeWorkflowId(input.runId),
    args: [input],
  });
  await handle.result();
  // Not waited for: a minute of real time at most, for three days of the server's.
  expect(Date.now() - startedAt).toBeLessThan(60_000);
  expect(runs.at(-1)).toEqual({ status: 'failed', error: 'step "sign-off" was not approved within 72h' });
  expect(steps.at(-1)).toEqual({ position: 0, status: 'failed', error: 'not approved within 72h' });
  expect(actions).toEqual([]);

  const { events } = await handle.fetchHistory();
  const timers = events!.filter((e) => e.timerStartedEventAttributes);
  expect(timers.map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds))).toEqual([HOURS_72]);
  const started = timers[0];
  const fired = events!.find((e) => e.timerFiredEventAttributes)!;
  expect(Number(fired.eventTime!.seconds) - Number(started.eventTime!.seconds)).toBeGreaterThanOrEqual(HOURS_72);
});
