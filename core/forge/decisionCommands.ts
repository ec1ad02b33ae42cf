import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { CallerPrincipal } from '../auth/principal';
import { actorOf, recordAudit, RefusedAction } from '../audit/store';
import { ApiError, notFound } from '../errors';
import { userOfActor } from '../notifications/recipients';
import { approvalTimeoutSeconds, approverRefusal, ruleOf, satisfiedClause } from './approvalRules';
import { approverFacts } from './approverStore';
import { decisionConflict } from './decisionRules';
import { inTenant, runEvent, temporalUnavailable, type ForgeCommandDeps } from './runCommands';
import { reconcileRun } from './runReconciliation';
import { deleteDecision, findRun, insertDecision, lockRunForDecision, snapshotAction } from './runStore';
import type { DecisionKind } from './types';

// Deciding on a run: approve, reject, cancel. Each database step is its own short transaction
// under the caller's tenant, and none is open while Temporal is called. A decision is committed
// before its signal is sent, and withdrawn if the signal cannot be sent.

/** A 409 naming the run's status, audited as a failed decision. */
const decisionRefused = (decision: DecisionKind, runId: string, message: string, status: string) =>
  new RefusedAction(
    new ApiError('CONFLICT', message, [{ field: 'status', message: status }]),
    runEvent(decision, runId),
  );

/**
 * Whether the caller may approve or reject the step waiting at `position`, by its rule (in the
 * run's copy of its mold): a 403, audited, for the starter (unless the rule allows it) and for
 * anyone the rule does not name. Otherwise the approvals the step needs and what the caller satisfied.
 */
async function judgeApprover(
  trx: Knex,
  caller: CallerPrincipal,
  run: { id: string; position: number; startedBy: string; awaitingSince: Date | null; status: string },
  decision: DecisionKind,
): Promise<{ required: number; satisfiedRule: string }> {
  const { id: runId, position, startedBy } = run;
  const action = await snapshotAction(trx, runId, position);
  // Past its timeout the step is failing (the workflow's timer fired or is about to): a late
  // approval must not be answered as accepted.
  const timeout = action?.approval_timeout;
  if (
    timeout !== undefined &&
    run.awaitingSince &&
    Date.now() >= run.awaitingSince.getTime() + approvalTimeoutSeconds(timeout) * 1000
  )
    throw decisionRefused(
      decision,
      runId,
      `Cannot ${decision} a run that is ${run.status}: step ${position} was not approved within ${timeout}`,
      run.status,
    );
  const rule = ruleOf(action);
  const [facts, starter] = await Promise.all([approverFacts(trx, caller.userId), userOfActor(trx, startedBy)]);
  const refusal = approverRefusal(rule, { userId: caller.userId, facts }, starter);
  if (refusal)
    throw new RefusedAction(
      new ApiError('FORBIDDEN', refusal, [{ field: 'step_position', message: String(position) }]),
      runEvent(decision, runId),
    );
  return { required: rule.count, satisfiedRule: satisfiedClause(rule, facts)! };
}

/**
 * Approves, rejects or cancels a run. Under the run's row lock: the rules (decisionRules) judge
 * the decision against the step's approver rule (a 403 outside it), the status and the decisions
 * already taken, and it is recorded (the unique indexes allow one approve per user and step, one
 * reject per step and one cancel per run). After the commit the workflow is signalled (an
 * approve only once the rule's count of distinct approvers is reached); a workflow that finds a
 * cancel recorded waits for its signal (workflows/forgeRun.ts). When the signal cannot be sent,
 * the decision is withdrawn, so one the caller was refused never counts: a 503 when Temporal is
 * unreachable. When the run's workflow is not running, the run is reconciled
 * (runReconciliation.ts): a cancel answers the run as that left it, ended; an approve or reject,
 * or a workflow that may still be starting, a 409.
 */
export async function decideRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { runId: string; decision: DecisionKind; comment?: string },
) {
  const { runId, decision, comment } = request;
  const { actor } = actorOf(caller);
  const { workflowId, position, decisionId, status, createdAt, signal } = await inTenant(deps, caller, async (trx) => {
    const run = await lockRunForDecision(trx, runId);
    if (!run) throw notFound('Run');
    // An approve or reject answers the step waiting now, never a later one, as its rule says.
    const stepPosition = decision === 'cancel' ? null : run.awaitingPosition;
    const approval =
      stepPosition === null || run.status !== 'awaiting_approval'
        ? undefined
        : await judgeApprover(trx, caller, { ...run, id: runId, position: stepPosition }, decision);
    const refusal = decisionConflict(decision, run, approval && { userId: caller.userId, required: approval.required });
    if (refusal) throw decisionRefused(decision, runId, refusal, run.status);
    const recorded = await insertDecision(trx, {
      tenantId: caller.tenantId,
      runId,
      kind: decision,
      position: stepPosition,
      actor,
      comment,
      ...(approval && { approver: { userId: caller.userId, satisfiedRule: approval.satisfiedRule } }),
    });
    if (!recorded)
      throw decisionRefused(
        decision,
        runId,
        `Cannot ${decision} a run that is ${run.status}: it was already decided`,
        run.status,
      );
    // An approve short of the rule's count is recorded and waits for the next approver; the
    // one that completes the count (or a reject, or a cancel) is signalled.
    const approvesSoFar = run.decisions.filter((d) => d.decision === 'approve' && d.step_position === stepPosition);
    return {
      workflowId: run.workflowId,
      position: stepPosition,
      decisionId: recorded,
      status: run.status,
      createdAt: run.createdAt,
      signal: decision !== 'approve' || approvesSoFar.length + 1 >= (approval?.required ?? 1),
    };
  });

  if (!signal) return recordedDecision(deps, caller, { runId, decision, position, comment });
  try {
    await deps.temporal.workflow
      .getHandle(workflowId)
      .signal(decision, { actor, comment, ...(position !== null && { position }) });
  } catch (err) {
    await inTenant(deps, caller, (trx) => deleteDecision(trx, decisionId));
    if (err instanceof WorkflowNotFoundError) {
      const run = { id: runId, workflow_id: workflowId, created_at: createdAt };
      const reconciled = await reconcileRun(deps, caller.tenantId, run);
      if (reconciled && decision === 'cancel') {
        const ended = await inTenant(deps, caller, (trx) => findRun(trx, runId));
        if (ended) return ended;
      }
      const ended = reconciled ? ' (the run is now ended)' : '';
      throw decisionRefused(
        decision,
        runId,
        `Cannot ${decision} a run that is ${status}: its workflow is not running${ended}`,
        status,
      );
    }
    throw temporalUnavailable(
      `The ${decision} was not recorded: the run's workflow could not be signalled`,
      runId,
      runEvent(decision, runId),
    );
  }

  return recordedDecision(deps, caller, { runId, decision, position, comment });
}

/** Audits an accepted decision and answers the run as it is now. */
function recordedDecision(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  {
    runId,
    decision,
    position,
    comment,
  }: { runId: string; decision: DecisionKind; position: number | null; comment?: string },
) {
  return inTenant(deps, caller, async (trx) => {
    await recordAudit(trx, caller, {
      ...runEvent(decision, runId),
      metadata: { ...(position !== null && { step: position }), ...(comment && { comment }) },
    });
    const run = await findRun(trx, runId);
    if (!run) throw notFound('Run');
    return run;
  });
}
