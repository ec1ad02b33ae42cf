import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import type { CallerPrincipal } from '../auth/principal';
import type { Config } from '../config';
import { actorOf, recordAudit, RefusedAction, type AuditEvent } from '../audit/store';
import { ApiError, invalid, notFound, rateLimited } from '../errors';
import { enforceProductionApproval } from '../policies/enforcement';
import type { PolicyReader } from '../policies/reader';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { decisionConflict } from './decisionRules';
import { checkRunParameters } from './moldRules';
import { findMold } from './moldStore';
import { reconcileRun } from './runReconciliation';
import { deleteDecision, failUnstartedRun, findRun, insertDecision, insertRun, lockRunForDecision } from './runStore';
import { runStartRefusal } from './slotStore';
import {
  FORGE_RUN_VERSION,
  forgeWorkflowId,
  withActionDefaults,
  type DecisionKind,
  type ForgeRunWorkflow,
  type RunStepSpec,
} from './types';

// Starting a run and deciding on one: the multi-step operations of the forge, callable from a
// route, a schedule or the CLI. Each database step is its own short transaction under the
// caller's tenant, and none is open while Temporal is called, so a slow or unreachable Temporal
// never holds pooled connections. The order of the steps keeps what the workflow relies on:
// the run is committed before its workflow starts, and a decision is committed before its
// signal is sent (and withdrawn if the signal cannot be sent).

export interface ForgeCommandDeps {
  /** The app role's pool. */
  db: Knex;
  temporal: TemporalClient;
  config: Config;
  policies: PolicyReader;
}

const inTenant = <T>(deps: ForgeCommandDeps, caller: CallerPrincipal, work: (trx: Knex.Transaction) => Promise<T>) =>
  withTenant(deps.db, caller.tenantId, work);

const runEvent = (action: string, runId: string): Omit<AuditEvent, 'status' | 'errorMessage'> => ({
  eventType: `forge.run.${action}`,
  action,
  targetType: 'run',
  targetId: runId,
});

/** Temporal could not be reached or refused the call: the caller may try again. */
const temporalUnavailable = (message: string, runId: string, event: Omit<AuditEvent, 'status' | 'errorMessage'>) =>
  new RefusedAction(
    new ApiError('SERVICE_UNAVAILABLE', message, [{ field: 'run_id', message: runId }], { 'Retry-After': '5' }),
    event,
  );

/** Parameters over the size cap: they are kept in the run's row and read by every action. */
function checkParametersSize(parameters: Record<string, unknown>, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(parameters));
  if (bytes <= maxBytes) return;
  throw new ApiError(
    'PAYLOAD_TOO_LARGE',
    `Run parameters are ${bytes} bytes: the limit is ${maxBytes} (SHIPYARD_FORGE_PARAMETERS_MAX_BYTES)`,
    [{ field: 'parameters', message: `at most ${maxBytes} bytes as JSON` }],
  );
}

/**
 * Starts a run of a mold: checks the parameters and the tenant's start rate, commits the run and
 * its steps (pending), then starts the workflow, whose first write therefore always finds the
 * run; it waits `pending` for a slot of its tenant (workflows/forgeRun.ts). When the start fails,
 * the run is marked failed (a pending run with no workflow would look pending forever) and the
 * caller gets a 503; the refusal is audited.
 */
export async function startRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { moldSlug: string; parameters: Record<string, unknown> },
) {
  const forgeConfig = deps.config.forge;
  checkParametersSize(request.parameters, forgeConfig.parametersMaxBytes);
  const id = randomUUID();
  const workflowId = forgeWorkflowId(id);
  const { run, steps, moldSlug, moldId, moldName } = await inTenant(deps, caller, async (trx) => {
    const refusal = await runStartRefusal(trx, caller.tenantId, forgeConfig.runStartsPerMinute);
    if (refusal)
      throw rateLimited(
        `This tenant may start ${refusal.perMinute} runs a minute; try again in ${refusal.retryAfterSeconds} s`,
        refusal.retryAfterSeconds,
        [{ field: 'runs', message: `at most ${refusal.perMinute} started per minute` }],
      );
    const mold = await findMold(trx, request.moldSlug);
    if (!mold) throw notFound('Mold');
    const { values, problems } = checkRunParameters(mold.parameters, request.parameters);
    if (problems.length) throw invalid('Invalid run parameters', problems);
    // Molds saved before their actions were stored with defaults get them here.
    const actions = mold.actions.map(withActionDefaults);
    const runSteps: RunStepSpec[] = actions.map((action, position) => ({
      position,
      name: action.name,
      type: action.type,
      config: action.config ?? {},
      // A mold-wide approval gates the first action.
      requiresApproval: action.requires_approval || (position === 0 && mold.requires_approval),
    }));
    await enforceProductionApproval(trx, await deps.policies.read(trx, caller.tenantId), {
      steps: runSteps,
      parameters: values,
    });
    const inserted = insertRun(trx, {
      id,
      tenantId: caller.tenantId,
      moldId: mold.id,
      moldSlug: mold.slug,
      moldVersion: mold.version,
      moldSnapshot: { parameters: mold.parameters, actions, requires_approval: mold.requires_approval },
      parameters: values,
      startedBy: actorOf(caller).actor,
      workflowId,
      steps: runSteps,
    });
    return {
      run: await inserted,
      steps: runSteps,
      moldSlug: mold.slug,
      moldId: mold.id,
      moldName: mold.name,
    };
  });

  try {
    await deps.temporal.workflow.start<ForgeRunWorkflow>('forgeRun', {
      taskQueue: TASK_QUEUES.forge,
      workflowId,
      // No parameters: the actions read them from the run's row, so however many steps there
      // are, the history holds them nowhere.
      args: [
        {
          tenantId: caller.tenantId,
          runId: id,
          steps,
          version: FORGE_RUN_VERSION,
          limits: {
            stepBudgetSeconds: forgeConfig.stepBudgetSeconds,
            slotRecheckSeconds: forgeConfig.slotRecheckSeconds,
          },
        },
      ],
      // Indexed in the clear for the Web UI's filters: opaque ids only. The memo is what an
      // operator reads, and is encrypted by the data converter like every payload.
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'forge-run', tenantId: caller.tenantId, moldId }),
      memo: { moldName, moldSlug, startedBy: actorOf(caller).actor },
    });
  } catch (err) {
    const reason = `its workflow could not be started (${(err as Error).message})`;
    await inTenant(deps, caller, (trx) => failUnstartedRun(trx, id, `the run was not started: ${reason}`));
    throw temporalUnavailable(`The run was created but ${reason}; it is marked failed`, id, runEvent('start', id));
  }

  await inTenant(deps, caller, (trx) =>
    recordAudit(trx, caller, {
      ...runEvent('start', id),
      eventType: 'forge.run.started',
      metadata: { mold: moldSlug },
    }),
  );
  return run;
}

/** A 409 naming the run's status, audited as a failed decision. */
const decisionRefused = (decision: DecisionKind, runId: string, message: string, status: string) =>
  new RefusedAction(
    new ApiError('CONFLICT', message, [{ field: 'status', message: status }]),
    runEvent(decision, runId),
  );

/**
 * Approves, rejects or cancels a run. Under the run's row lock: the rules (decisionRules) judge
 * the decision against the status and the decisions already taken, and it is recorded (the
 * unique indexes allow one per step and one cancel per run). After the commit the workflow is
 * signalled; a workflow that finds a cancel recorded waits for its signal (workflows/forgeRun.ts).
 * When the signal cannot be sent, the decision is withdrawn, so one the caller was refused never
 * counts: a 503 when Temporal is unreachable. When the run's workflow is not running, the run is
 * reconciled (runReconciliation.ts): a cancel answers the run as that left it, ended; an approve
 * or reject, or a workflow that may still be starting, a 409.
 */
export async function decideRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { runId: string; decision: DecisionKind; comment?: string },
) {
  const { runId, decision, comment } = request;
  const { actor } = actorOf(caller);
  const { workflowId, position, decisionId, status, createdAt } = await inTenant(deps, caller, async (trx) => {
    const run = await lockRunForDecision(trx, runId);
    if (!run) throw notFound('Run');
    const refusal = decisionConflict(decision, run);
    if (refusal) throw decisionRefused(decision, runId, refusal, run.status);
    // An approve or reject answers the step waiting now, never a later one.
    const stepPosition = decision === 'cancel' ? null : run.awaitingPosition;
    const recorded = await insertDecision(trx, {
      tenantId: caller.tenantId,
      runId,
      kind: decision,
      position: stepPosition,
      actor,
      comment,
    });
    if (!recorded)
      throw decisionRefused(
        decision,
        runId,
        `Cannot ${decision} a run that is ${run.status}: it was already decided`,
        run.status,
      );
    return {
      workflowId: run.workflowId,
      position: stepPosition,
      decisionId: recorded,
      status: run.status,
      createdAt: run.createdAt,
    };
  });

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
