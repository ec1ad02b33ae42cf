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
import type { Decision, ForgeRunInput, RunStepSpec } from './forgeTypes';

export const approveSignal = defineSignal<[Decision]>('approve');
export const rejectSignal = defineSignal<[Decision]>('reject');
export const cancelSignal = defineSignal<[Decision]>('cancel');

// Bookkeeping: quick database writes, retried until they land. Local activities run in the
// worker that runs the workflow, without a task-queue round trip each (about 100 ms here).
const record = proxyLocalActivities<ForgeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds' },
});

/** The action itself, with the step's own timeout and attempts; heartbeats carry cancellation. */
function actionRunner(step: RunStepSpec) {
  const timeoutSeconds = Number(step.config.timeout_seconds ?? 60);
  // Scripts are not assumed idempotent: one attempt. HTTP actions retry 5xx and network errors.
  const maximumAttempts = step.type === 'script' ? 1 : Number(step.config.max_attempts ?? 3);
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

/**
 * One forge run: the mold's actions in order, each an activity on the forge pool. An approval
 * step (or an action that requires approval) waits for the approve or reject signal; the
 * cancel signal stops the run wherever it is, cancelling the action in flight. Every state
 * change is written to the database by an activity, so the run record follows the workflow.
 */
export async function forgeRun(input: ForgeRunInput): Promise<void> {
  const { tenantId, runId } = input;
  let awaiting = false;
  let decision: { kind: 'approve' | 'reject'; by: Decision } | undefined;
  let cancelledBy: Decision | undefined;
  const actionScope = new CancellationScope();

  setHandler(approveSignal, (by) => {
    if (awaiting) decision = { kind: 'approve', by };
  });
  setHandler(rejectSignal, (by) => {
    if (awaiting) decision = { kind: 'reject', by };
  });
  setHandler(cancelSignal, (by) => {
    cancelledBy ??= by;
    actionScope.cancel();
  });

  const finish = (status: 'completed' | 'failed' | 'cancelled', error?: string) =>
    CancellationScope.nonCancellable(() => record.markRun({ tenantId, runId, status, error }));
  const cancelRest = (from: number) =>
    CancellationScope.nonCancellable(async () => {
      await record.markOpenSteps({ tenantId, runId, fromPosition: from, status: 'cancelled' });
      await record.appendLog({ tenantId, runId, level: 'warn', message: `cancelled by ${cancelledBy?.actor}` });
      await record.markRun({ tenantId, runId, status: 'cancelled' });
    });

  await record.markRun({ tenantId, runId, status: 'running' });
  for (const step of input.steps) {
    const { position } = step;
    if (cancelledBy) return cancelRest(position);

    if (step.type === 'approval' || step.requiresApproval) {
      await record.markStep({ tenantId, runId, position, status: 'awaiting_approval' });
      await record.markRun({ tenantId, runId, status: 'awaiting_approval' });
      awaiting = true;
      decision = undefined;
      await condition(() => decision !== undefined || cancelledBy !== undefined);
      awaiting = false;
      if (cancelledBy) return cancelRest(position);
      const { kind, by } = decision!;
      await record.appendLog({ tenantId, runId, position, message: `${kind === 'approve' ? 'approved' : 'rejected'} by ${by.actor}${by.comment ? `: ${by.comment}` : ''}` });
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
      const output = await actionScope.run(() => actionRunner(step)({ tenantId, runId, step, parameters: input.parameters }));
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
