import {
  ActivityFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ForgeActivities } from '../activities/forge';
import type { Decision, ForgeRunInput, RunStepSpec, StepDecision } from '../core/forge/types';

export const approveSignal = defineSignal<[StepDecision]>('approve');
export const rejectSignal = defineSignal<[StepDecision]>('reject');
export const cancelSignal = defineSignal<[Decision]>('cancel');

// Bookkeeping: quick database writes, retried until they land. Local activities run in the
// worker that runs the workflow, without a task-queue round trip each (about 100 ms here).
const record = proxyLocalActivities<ForgeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds' },
});

// The first write waits for the API's transaction, which commits the run just after starting
// this workflow: retried quickly (100, 200, 400, 800 ms, then every second) and given up after
// about a minute, when that transaction has surely rolled back and there is no run to execute.
// Bounded by attempts: the SDK's schedule-to-close limit did not stop a local activity's retries.
const recordFirst = proxyLocalActivities<ForgeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', maximumInterval: '1 second', maximumAttempts: 60 },
});

/** The action itself, with the step's own timeout and attempts; heartbeats carry cancellation. */
function actionRunner(step: RunStepSpec) {
  const timeoutSeconds = Number(step.config.timeout_seconds ?? 60);
  // HTTP actions throw 5xx and network errors as retryable. A script's own failures are not
  // retryable; its attempts count only when a worker is lost (heartbeat timeout).
  const maximumAttempts = Number(step.config.max_attempts ?? 3);
  return proxyActivities<ForgeActivities>({
    startToCloseTimeout: `${timeoutSeconds + 5} seconds`,
    heartbeatTimeout: '10 seconds',
    retry: { maximumAttempts, initialInterval: '1 second', backoffCoefficient: 2 },
  }).runAction;
}

const failureMessage = (err: unknown): string => {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
};

const byWhom = (verb: string, by: Decision) => `${verb} by ${by.actor}${by.comment ? `: ${by.comment}` : ''}`;

/**
 * One forge run: the mold's actions in order, each an activity on the forge pool. An approval
 * step (or an action that requires approval) waits for the approve or reject signal naming its
 * position; the cancel signal stops the run wherever it is, cancelling the action in flight.
 * Every state change is written to the database by an activity, so the run record follows the
 * workflow.
 */
export async function forgeRun(input: ForgeRunInput): Promise<void> {
  const { tenantId, runId } = input;
  // Kept per step and whenever they arrive: a decision that lands before the workflow reaches
  // its wait (even in the same activation) still counts. The API accepts one per step.
  const decisions = new Map<number, { kind: 'approve' | 'reject'; by: Decision }>();
  let cancelledBy: Decision | undefined;
  const actionScope = new CancellationScope();

  const decide = (kind: 'approve' | 'reject') => (by: StepDecision) => {
    if (!decisions.has(by.position)) decisions.set(by.position, { kind, by });
  };
  setHandler(approveSignal, decide('approve'));
  setHandler(rejectSignal, decide('reject'));
  setHandler(cancelSignal, (by) => {
    cancelledBy ??= by;
    actionScope.cancel();
  });

  const cancelRest = (from: number) =>
    CancellationScope.nonCancellable(async () => {
      await record.markOpenSteps({ tenantId, runId, fromPosition: from, status: 'cancelled' });
      await record.appendLog({ tenantId, runId, level: 'warn', message: byWhom('cancelled', cancelledBy!) });
      await record.markRun({ tenantId, runId, status: 'cancelled' });
    });
  // An accepted cancel wins over any other ending, even one that arrives after the last action.
  const finish = async (status: 'completed' | 'failed', error?: string) => {
    if (!cancelledBy) {
      const result = await CancellationScope.nonCancellable(() => record.markRun({ tenantId, runId, status, error }));
      if (result !== 'cancel-accepted') return;
      // The API signals before it commits a cancel, so the signal is already in history.
      await condition(() => cancelledBy !== undefined);
    }
    await cancelRest(input.steps.length); // every step has ended by now: nothing left to mark
  };

  await recordFirst.markRun({ tenantId, runId, status: 'running' });
  for (const step of input.steps) {
    const { position } = step;
    if (cancelledBy) return cancelRest(position);

    if (step.type === 'approval' || step.requiresApproval) {
      await record.markStep({ tenantId, runId, position, status: 'awaiting_approval' });
      await record.markRun({ tenantId, runId, status: 'awaiting_approval' });
      await condition(() => decisions.has(position) || cancelledBy !== undefined);
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
      await record.markRun({ tenantId, runId, status: 'running' });
      if (step.type === 'approval') {
        await record.markStep({ tenantId, runId, position, status: 'completed' });
        continue;
      }
    }

    await record.markStep({ tenantId, runId, position, status: 'running' });
    try {
      const output = await actionScope.run(() =>
        actionRunner(step)({ tenantId, runId, step, parameters: input.parameters }),
      );
      await record.markStep({ tenantId, runId, position, status: 'completed', output });
    } catch (err) {
      if (cancelledBy || isCancellation(err)) return cancelRest(position);
      const message = failureMessage(err);
      await record.markStep({ tenantId, runId, position, status: 'failed', error: message });
      await record.markOpenSteps({ tenantId, runId, fromPosition: position + 1, status: 'skipped' });
      return finish('failed', `step "${step.name}" failed: ${message}`);
    }
  }
  await finish('completed');
}
