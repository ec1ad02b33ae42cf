import {
  ActivityFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ForgeActivities } from '../activities/forge';
import type {
  Decision,
  DecisionKind,
  ForgeRunInput,
  ForgeRunWorkflow,
  RunLimits,
  RunMarkOutcome,
  RunStatus,
  RunStepSpec,
  SlotKind,
  StepDecision,
} from '../core/forge/types';

type StepDecisionKind = Exclude<DecisionKind, 'cancel'>;

export const approveSignal = defineSignal<[StepDecision]>('approve');
export const rejectSignal = defineSignal<[StepDecision]>('reject');
export const cancelSignal = defineSignal<[Decision]>('cancel');
/** Sent by a run that gave a slot back to the runs of its tenant that may take one now. */
export const slotFreedSignal = defineSignal('slot-freed');

// Bookkeeping: quick database writes, retried until they land. Local activities run in the
// worker that runs the workflow, without a task-queue round trip each (about 100 ms here).
const record = proxyLocalActivities<ForgeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds' },
});

/**
 * How long the workflow waits for the signal of a cancel it found recorded before it looks
 * again. The API commits a cancel, then signals it; a signal that cannot be sent makes the API
 * withdraw the cancel, and the next look then ends the run as it was going to.
 */
const CANCEL_SIGNAL_WAIT = '10 seconds';

/**
 * The action itself, with the step's own timeout and attempts; heartbeats carry cancellation.
 * The API builds steps with their config defaults (core/forge/types.ts withActionDefaults).
 * From version 4 the step's attempts together get `limits.stepBudgetSeconds`.
 */
function actionRunner(step: RunStepSpec, limits?: RunLimits) {
  const timeoutSeconds = Number(step.config.timeout_seconds);
  // HTTP actions throw 5xx and network errors as retryable. A script's own failures are not
  // retryable; its attempts count only when a worker is lost (heartbeat timeout).
  const maximumAttempts = Number(step.config.max_attempts);
  return proxyActivities<ForgeActivities>({
    startToCloseTimeout: `${timeoutSeconds + 5} seconds`,
    ...(limits && { scheduleToCloseTimeout: `${limits.stepBudgetSeconds} seconds` }),
    heartbeatTimeout: '10 seconds',
    retry: { maximumAttempts, initialInterval: '1 second', backoffCoefficient: 2 },
  }).runAction;
}

const failureMessage = (err: unknown, limits?: RunLimits): string => {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  // The budget ends a step whose attempt is running at its deadline, or whose next one would start after it.
  const overBudget = limits && err instanceof ActivityFailure && err.retryState === 'TIMEOUT';
  return overBudget ? `${message} (its attempts took the step's budget of ${limits.stepBudgetSeconds} s)` : message;
};

const byWhom = (verb: string, by: Decision) => `${verb} by ${by.actor}${by.comment ? `: ${by.comment}` : ''}`;

const needsApproval = (step: RunStepSpec) => step.type === 'approval' || step.requiresApproval;

/**
 * One forge run: the mold's actions in order, each an activity on the forge pool. An approval
 * step (or an action that requires approval) waits for the approve or reject signal naming its
 * position; the cancel signal stops the run wherever it is, cancelling the action in flight.
 * Every state change is written to the database by an activity, so the run record follows the
 * workflow. From version 4 (input.limits), the run first takes one of its tenant's run slots
 * (waiting `pending` until it gets one), which it gives back while it waits for an approval, and
 * each action one of its action slots; a run waits for
 * a slot here in the workflow, holding no worker, until the run that gives one back signals it
 * or its recheck timer fires. From version 5, an approval step with a timeout fails the run
 * when no decision arrives in time.
 */
export async function forgeRun(input: ForgeRunInput): Promise<void> {
  const { tenantId, runId, limits } = input;
  // Kept per step and whenever they arrive: a decision that lands before the workflow reaches
  // its wait (even in the same activation) still counts. The API accepts one per step.
  const decisions = new Map<number, { kind: StepDecisionKind; by: Decision }>();
  let cancelledBy: Decision | undefined;
  const actionScope = new CancellationScope();

  const decide = (kind: StepDecisionKind) => (by: StepDecision) => {
    if (!decisions.has(by.position)) decisions.set(by.position, { kind, by });
  };
  setHandler(approveSignal, decide('approve'));
  setHandler(rejectSignal, decide('reject'));
  setHandler(cancelSignal, (by) => {
    cancelledBy ??= by;
    actionScope.cancel();
  });
  let slotsFreed = 0;
  setHandler(slotFreedSignal, () => {
    slotsFreed += 1;
  });

  // Slots given back wait for the run's next exchange (between two actions, one local activity
  // gives the last action's back and takes the next one's); before a wait and at its end the run
  // sends them at once.
  const held = new Set<SlotKind>();
  let givingBack: SlotKind[] = [];
  const exchange = async (acquire: SlotKind[]) => {
    const release = givingBack;
    givingBack = [];
    const { granted, wake } = await record.exchangeSlots({ tenantId, runId, release, acquire });
    for (const kind of granted) held.add(kind);
    // A run that has ended meanwhile cannot be signalled, and needs nothing.
    await Promise.allSettled(wake.map((id) => getExternalWorkflowHandle(id).signal(slotFreedSignal)));
    return granted;
  };
  const giveBack = (...kinds: SlotKind[]) => {
    for (const kind of kinds) {
      held.delete(kind);
      if (!givingBack.includes(kind)) givingBack.push(kind);
    }
  };
  const sendGivenBack = () => CancellationScope.nonCancellable(() => exchange([]));
  /**
   * Takes slots of `kinds` in order, waiting as long as it takes; false when the run is
   * cancelled meanwhile (its requests are withdrawn with the run's last exchange).
   */
  const takeSlots = async (kinds: SlotKind[], runLimits: RunLimits): Promise<boolean> => {
    let wanted = kinds.filter((kind) => !held.has(kind));
    while (wanted.length) {
      const seen = slotsFreed;
      const granted = await exchange(wanted);
      wanted = wanted.filter((kind) => !granted.includes(kind));
      if (!wanted.length) break;
      await condition(() => slotsFreed > seen || cancelledBy !== undefined, `${runLimits.slotRecheckSeconds} seconds`);
      if (cancelledBy) return false;
    }
    return true;
  };

  const cancelRest = (from: number) =>
    CancellationScope.nonCancellable(async () => {
      await record.markOpenSteps({ tenantId, runId, fromPosition: from, status: 'cancelled' });
      await record.appendLog({ tenantId, runId, level: 'warn', message: byWhom('cancelled', cancelledBy!) });
      await record.markRun({ tenantId, runId, status: 'cancelled' });
    });
  // An accepted cancel wins over any other ending, even one that arrives after the last action.
  // `written`: the outcome of the ending the last action already wrote, if it did.
  const finish = async (
    status: Extract<RunStatus, 'completed' | 'failed'>,
    error?: string,
    written?: RunMarkOutcome,
  ) => {
    let outcome = written;
    while (!cancelledBy) {
      outcome ??= await CancellationScope.nonCancellable(() => record.markRun({ tenantId, runId, status, error }));
      if (outcome !== 'cancel-accepted') return;
      // The API commits a cancel before it signals: its signal is on the way, or the cancel
      // will be withdrawn.
      await condition(() => cancelledBy !== undefined, CANCEL_SIGNAL_WAIT);
      outcome = undefined;
    }
    await cancelRest(input.steps.length); // every step has ended by now: nothing left to mark
  };

  // Decided once, before the first command, so each replay decides alike. A run names its
  // version in its input (FORGE_RUN_VERSION), which costs its history nothing; one started before
  // that decided by patch markers, in this order. Runs started before the action activity marked
  // its own step replay the workflow's marks around each action; runs started before it also
  // marked the run's start and end replay the workflow's run marks.
  const versioned = input.version !== undefined;
  // Version 4 on: the run holds one of its tenant's run slots from its first step to its end,
  // but for its approval waits; a first action's slot is taken with it.
  if (!limits) return runSteps();
  try {
    const first = input.steps[0];
    const kinds: SlotKind[] = first && !needsApproval(first) ? ['run', 'action'] : ['run'];
    return (await takeSlots(kinds, limits)) ? await runSteps() : await cancelRest(0);
  } finally {
    giveBack('run', 'action');
    await sendGivenBack();
  }

  async function runSteps(): Promise<void> {
    const workflowMarksSteps = !versioned && !patched('action-marks-its-step');
    const actionMarksRun = versioned || patched('action-marks-run');

    // The API commits the run before starting this workflow. It marks the run failed when the
    // start seemed to fail: should the workflow have started after all, it stops at the first
    // write, the first action's own (one local activity fewer) or, before an approval, its own.
    const firstActionStartsRun = actionMarksRun && input.steps.length > 0 && !needsApproval(input.steps[0]);
    if (
      !firstActionStartsRun &&
      (await record.markRun({ tenantId, runId, status: 'running' })) === 'already-finished'
    ) {
      return;
    }
    let lastActionEnding: RunMarkOutcome | undefined;
    for (const [index, step] of input.steps.entries()) {
      const { position } = step;
      if (cancelledBy) return cancelRest(position);

      if (needsApproval(step)) {
        await record.markStep({ tenantId, runId, position, status: 'awaiting_approval' });
        await record.markRun({ tenantId, runId, status: 'awaiting_approval' });
        // Waiting for a person, a run holds no run slot: its tenant's other runs go on meanwhile.
        if (limits) {
          giveBack('run');
          await sendGivenBack();
        }
        const decided = () => decisions.has(position) || cancelledBy !== undefined;
        // Version 5 on, an approval with a timeout waits on a timer: a durable one, kept by the
        // server, so it fires whichever worker (after any restart) runs the workflow then.
        const timeout = (input.version ?? 0) >= 5 ? step.approvalTimeout : undefined;
        if (timeout === undefined) await condition(decided);
        else if (!(await condition(decided, timeout))) {
          const reason = `not approved within ${timeout}`;
          await record.appendLog({ tenantId, runId, position, level: 'warn', message: `${step.name}: ${reason}` });
          await record.markStep({ tenantId, runId, position, status: 'failed', error: reason });
          await record.markOpenSteps({ tenantId, runId, fromPosition: position + 1, status: 'skipped' });
          return finish('failed', `step "${step.name}" was ${reason}`);
        }
        if (cancelledBy) return cancelRest(position);
        const { kind, by } = decisions.get(position)!;
        await record.appendLog({
          tenantId,
          runId,
          position,
          message: byWhom(kind === 'approve' ? 'approved' : 'rejected', by),
        });
        if (kind === 'reject') {
          await record.markStep({ tenantId, runId, position, status: 'failed', error: 'rejected' });
          await record.markOpenSteps({ tenantId, runId, fromPosition: position + 1, status: 'skipped' });
          return finish('failed', `rejected by ${by.actor}`);
        }
        // Approved, it queues for a run slot again (still awaiting_approval to its readers).
        if (limits && !(await takeSlots(['run'], limits))) return cancelRest(position);
        await record.markRun({ tenantId, runId, status: 'running' });
        if (step.type === 'approval') {
          await record.markStep({ tenantId, runId, position, status: 'completed' });
          continue;
        }
      }

      // The action activity marks its step running and completed itself, in the transactions of
      // its own log lines: two local activities (and their database round trips) fewer per step.
      // The last one also writes the run's completion, which the workflow then only has to confirm.
      if (workflowMarksSteps) await record.markStep({ tenantId, runId, position, status: 'running' });
      try {
        const runMarks = actionMarksRun && {
          startsRun: firstActionStartsRun && index === 0,
          completesRun: index === input.steps.length - 1,
        };
        const perform = () =>
          actionScope.run(() =>
            actionRunner(step, limits)({ tenantId, runId, step, parameters: input.parameters, ...runMarks }),
          );
        const answer = await (limits ? underActionSlot(limits, perform) : perform());
        // Only an action told to mark the run answers with that write (older ones returned their output).
        const runWrite = runMarks ? answer : undefined;
        if (runWrite === 'already-finished') return;
        lastActionEnding = runWrite;
        if (workflowMarksSteps) await record.markStep({ tenantId, runId, position, status: 'completed' });
      } catch (err) {
        if (cancelledBy || isCancellation(err)) return cancelRest(position);
        const message = failureMessage(err, limits);
        await record.markStep({ tenantId, runId, position, status: 'failed', error: message });
        await record.markOpenSteps({ tenantId, runId, fromPosition: position + 1, status: 'skipped' });
        return finish('failed', `step "${step.name}" failed: ${message}`);
      }
    }
    await finish('completed', undefined, lastActionEnding);
  }

  /** `perform` run holding one of the tenant's action slots; a cancel while it waits for one rejects. */
  async function underActionSlot<T>(runLimits: RunLimits, perform: () => Promise<T>): Promise<T> {
    try {
      if (!(await takeSlots(['action'], runLimits)))
        throw new CancelledFailure('cancelled while waiting for an action slot');
      return await perform();
    } finally {
      giveBack('action');
    }
  }
}

// The contract core/ starts this workflow by (it names it, never imports it).
forgeRun satisfies ForgeRunWorkflow;
