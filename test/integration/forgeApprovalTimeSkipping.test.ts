import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Connection, type Client } from '@temporalio/client';
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
import { freePort, ROOT, stop, until } from '../support/processes';
import { startStubWorker } from '../support/stubWorker';

// A 72-hour approval timeout on Temporal's time-skipping test server (as betaGraceTimeSkipping
// .test.ts finds and starts it), never by waiting: the server moves its clock to the timer as
// soon as no task is outstanding. The real workflow code runs, with stub activities.

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

let server: ChildProcess;
let client: Client;
let closeWorker: (() => Promise<void>) | undefined;
const taskQueue = `forge-approval-time-skipping-${randomUUID().slice(0, 8)}`;

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
  const handle = await client.workflow.start<typeof forgeRun>('forgeRun', {
    taskQueue,
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
