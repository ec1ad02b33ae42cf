import { randomUUID } from 'node:crypto';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import type { CallerPrincipal } from '../auth/principal';
import type { Config } from '../config';
import { actorOf, recordAudit, RefusedAction, type AuditEvent } from '../audit/store';
import { ApiError, invalid, notFound, rateLimited, type ErrorDetail } from '../errors';
import { enforceProductionApproval } from '../policies/enforcement';
import type { PolicyReader } from '../policies/reader';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { actionNeedsApproval } from './approvalRules';
import { checkRunParameters, parametersUsedBy } from './moldRules';
import { findMold } from './moldStore';
import { failUnstartedRun, insertRun, runToRetry } from './runStore';
import { runStartRefusal } from './slotStore';
import {
  FORGE_RUN_VERSION,
  forgeWorkflowId,
  withActionDefaults,
  type ForgeRunWorkflow,
  type MoldAction,
  type MoldParameter,
  type RunStepSpec,
} from './types';

// Starting a run, and retrying a failed one: the multi-step operations of the forge, callable
// from a route, a schedule or the CLI. Each database step is its own short transaction under the
// caller's tenant, and none is open while Temporal is called, so a slow or unreachable Temporal
// never holds pooled connections. The run is committed before its workflow starts.

export interface ForgeCommandDeps {
  /** The app role's pool. */
  db: Knex;
  temporal: TemporalClient;
  config: Config;
  policies: PolicyReader;
}

export const inTenant = <T>(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  work: (trx: Knex.Transaction) => Promise<T>,
) => withTenant(deps.db, caller.tenantId, work);

export const runEvent = (action: string, runId: string): Omit<AuditEvent, 'status' | 'errorMessage'> => ({
  eventType: `forge.run.${action}`,
  action,
  targetType: 'run',
  targetId: runId,
});

/** Temporal could not be reached or refused the call: the caller may try again. */
export const temporalUnavailable = (
  message: string,
  runId: string,
  event: Omit<AuditEvent, 'status' | 'errorMessage'>,
) =>
  new RefusedAction(
    new ApiError('SERVICE_UNAVAILABLE', message, [{ field: 'run_id', message: runId }], { 'Retry-After': '5' }),
    event,
  );

/** Parameters over the size cap: they are kept in the run's row and read by every action. */
export function checkParametersSize(parameters: Record<string, unknown>, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(parameters));
  if (bytes <= maxBytes) return;
  throw new ApiError(
    'PAYLOAD_TOO_LARGE',
    `Run parameters are ${bytes} bytes: the limit is ${maxBytes} (SHIPYARD_FORGE_PARAMETERS_MAX_BYTES)`,
    [{ field: 'parameters', message: `at most ${maxBytes} bytes as JSON` }],
  );
}

/**
 * A mold's actions as a run's steps, their config defaults filled in (molds saved before a default
 * existed get it here).
 */
export function runStepsOf(actions: readonly MoldAction[], moldRequiresApproval: boolean): RunStepSpec[] {
  return actions.map(withActionDefaults).map((action, position) => ({
    position,
    name: action.name,
    type: action.type,
    config: action.config ?? {},
    // A mold-wide approval gates the first action.
    requiresApproval: action.requires_approval || (position === 0 && moldRequiresApproval),
    ...(action.approval_timeout !== undefined &&
      actionNeedsApproval(action, position === 0 && moldRequiresApproval) && {
        approvalTimeout: action.approval_timeout,
      }),
  }));
}

/** The steps as production_molds_need_approval judges them: an approval its starter may give is none. */
export const policySteps = (steps: RunStepSpec[], actions: readonly MoldAction[]) =>
  steps.map((step) => ({ ...step, selfApproval: actions[step.position]?.approvers?.allow_self_approval === true }));

/** The mold's parameters checked and resolved (defaults filled in), or a 400 naming each problem. */
export function resolveParameters(
  definitions: readonly MoldParameter[],
  values: Record<string, unknown>,
  extraProblems: ErrorDetail[] = [],
): Record<string, unknown> {
  const { values: resolved, problems } = checkRunParameters(definitions, values);
  if (problems.length || extraProblems.length) throw invalid('Invalid run parameters', [...extraProblems, ...problems]);
  return resolved;
}

/** A 429 when the tenant has started its runs of this minute (taken under the tenant's start lock). */
async function refuseOverStartRate(trx: Knex, caller: CallerPrincipal, perMinute: number): Promise<void> {
  const refusal = await runStartRefusal(trx, caller.tenantId, perMinute);
  if (refusal)
    throw rateLimited(
      `This tenant may start ${refusal.perMinute} runs a minute; try again in ${refusal.retryAfterSeconds} s`,
      refusal.retryAfterSeconds,
      [{ field: 'runs', message: `at most ${refusal.perMinute} started per minute` }],
    );
}

interface CommittedRun {
  id: string;
  /** The steps the workflow executes (a retry's skipped ones are not among them). */
  steps: RunStepSpec[];
  moldId: string | null;
  moldSlug: string;
  moldName: string;
}

/**
 * Starts the workflow of a committed run; it waits `pending` for a slot of its tenant like any
 * run (workflows/forgeRun.ts). When the start fails, the run is marked failed (a pending run with
 * no workflow would look pending forever) and the caller gets a 503; the refusal is audited.
 */
async function launchRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  run: CommittedRun,
  audit: Omit<AuditEvent, 'status' | 'errorMessage'>,
): Promise<void> {
  const forgeConfig = deps.config.forge;
  const workflowId = forgeWorkflowId(run.id);
  try {
    await deps.temporal.workflow.start<ForgeRunWorkflow>('forgeRun', {
      taskQueue: TASK_QUEUES.forge,
      workflowId,
      // No parameters: the actions read them from the run's row, so however many steps there
      // are, the history holds them nowhere.
      args: [
        {
          tenantId: caller.tenantId,
          runId: run.id,
          steps: run.steps,
          version: FORGE_RUN_VERSION,
          limits: {
            stepBudgetSeconds: forgeConfig.stepBudgetSeconds,
            slotRecheckSeconds: forgeConfig.slotRecheckSeconds,
          },
        },
      ],
      // Indexed in the clear for the Web UI's filters: opaque ids only. The memo is what an
      // operator reads, and is encrypted by the data converter like every payload.
      typedSearchAttributes: shipyardSearchAttributes({
        kind: 'forge-run',
        tenantId: caller.tenantId,
        moldId: run.moldId ?? undefined,
      }),
      memo: { moldName: run.moldName, moldSlug: run.moldSlug, startedBy: actorOf(caller).actor },
    });
  } catch (err) {
    const reason = `its workflow could not be started (${(err as Error).message})`;
    await inTenant(deps, caller, (trx) => failUnstartedRun(trx, run.id, `the run was not started: ${reason}`));
    throw temporalUnavailable(`The run was created but ${reason}; it is marked failed`, run.id, audit);
  }
  await inTenant(deps, caller, (trx) => recordAudit(trx, caller, audit));
}

/**
 * What a start of `request` would run: its mold, the parameters resolved and checked, the actions
 * with their defaults and the steps, allowed by the tenant's production-approval policy. A start
 * and a dry run both begin here.
 */
export async function planOfStart(
  trx: Knex,
  deps: Pick<ForgeCommandDeps, 'policies'>,
  caller: CallerPrincipal,
  request: { moldSlug: string; parameters: Record<string, unknown> },
) {
  const mold = await findMold(trx, request.moldSlug);
  if (!mold) throw notFound('Mold');
  const values = resolveParameters(mold.parameters, request.parameters);
  const actions = mold.actions.map(withActionDefaults);
  const steps = runStepsOf(actions, mold.requires_approval);
  await enforceProductionApproval(trx, await deps.policies.read(trx, caller.tenantId), {
    steps: policySteps(steps, actions),
    parameters: values,
  });
  return { mold, values, actions, steps };
}

/**
 * Starts a run of a mold: checks the parameters and the tenant's start rate, commits the run and
 * its steps (pending), then starts the workflow, whose first write therefore always finds the run.
 */
export async function startRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { moldSlug: string; parameters: Record<string, unknown> },
) {
  const forgeConfig = deps.config.forge;
  checkParametersSize(request.parameters, forgeConfig.parametersMaxBytes);
  const id = randomUUID();
  const { run, committed } = await inTenant(deps, caller, async (trx) => {
    await refuseOverStartRate(trx, caller, forgeConfig.runStartsPerMinute);
    const { mold, values, actions, steps } = await planOfStart(trx, deps, caller, request);
    const inserted = await insertRun(trx, {
      id,
      tenantId: caller.tenantId,
      moldId: mold.id,
      moldSlug: mold.slug,
      moldVersion: mold.version,
      moldSnapshot: { parameters: mold.parameters, actions, requires_approval: mold.requires_approval },
      parameters: values,
      startedBy: actorOf(caller).actor,
      workflowId: forgeWorkflowId(id),
      steps,
    });
    return { run: inserted, committed: { id, steps, moldId: mold.id, moldSlug: mold.slug, moldName: mold.name } };
  });
  await launchRun(deps, caller, committed, {
    ...runEvent('start', id),
    eventType: 'forge.run.started',
    metadata: { mold: committed.moldSlug },
  });
  return run;
}

/**
 * Retries a failed run: a new run (`retry_of` the first) of the same mold version, from the copy
 * of the mold the first one kept, with its parameters, or `parameters` overriding those the
 * steps still to run use. The steps that completed (in the first run, or in a run it retried)
 * are recorded skipped, pointing to the run they completed in; the workflow starts at the first
 * step that did not. It counts against the tenant's start rate and slots like any start.
 */
export async function retryRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { runId: string; parameters?: Record<string, unknown> },
) {
  const forgeConfig = deps.config.forge;
  const overrides = request.parameters ?? {};
  const id = randomUUID();
  const refused = (message: string, status: string) =>
    new RefusedAction(
      new ApiError('CONFLICT', message, [{ field: 'status', message: status }]),
      runEvent('retry', request.runId),
    );
  const { run, committed } = await inTenant(deps, caller, async (trx) => {
    const source = await runToRetry(trx, request.runId);
    if (!source) throw notFound('Run');
    if (source.status !== 'failed')
      throw refused(`Only a failed run can be retried: this one is ${source.status}`, source.status);
    const snapshot = source.mold_snapshot;
    const actions = (snapshot.actions ?? []).map(withActionDefaults);
    const steps = runStepsOf(actions, snapshot.requires_approval ?? false);
    const completedIn = (step: (typeof source.steps)[number]) =>
      step.status === 'completed' ? source.id : step.completed_in;
    const firstOpen = source.steps.findIndex((step) => !completedIn(step));
    if (firstOpen === -1) throw refused('Every step of this run completed: there is nothing to retry', source.status);
    const remaining = steps.slice(firstOpen);
    const used = parametersUsedBy(remaining);
    const definitions = (snapshot.parameters ?? []) as MoldParameter[];
    const known = new Set(definitions.map((p) => p.name));
    const unused = Object.keys(overrides)
      .filter((name) => known.has(name) && used !== 'all' && !used.has(name))
      .map((name) => ({
        field: `parameters.${name}`,
        message: 'is used by no step the retry runs (they completed in the run retried)',
      }));
    const parameters = { ...source.parameters, ...overrides };
    checkParametersSize(parameters, forgeConfig.parametersMaxBytes);
    const values = resolveParameters(definitions, parameters, unused);
    await refuseOverStartRate(trx, caller, forgeConfig.runStartsPerMinute);
    // Judged on the whole mold as the first run was: an approval that gated it counts again.
    await enforceProductionApproval(trx, await deps.policies.read(trx, caller.tenantId), {
      steps: policySteps(steps, actions),
      parameters: values,
    });
    const inserted = await insertRun(trx, {
      id,
      tenantId: caller.tenantId,
      moldId: source.mold_id,
      moldSlug: source.mold_slug,
      moldVersion: source.mold_version,
      moldSnapshot: snapshot,
      parameters: values,
      startedBy: actorOf(caller).actor,
      workflowId: forgeWorkflowId(id),
      steps: remaining,
      retry: {
        of: source.id,
        completed: source.steps.slice(0, firstOpen).map((step) => ({
          position: step.position,
          name: step.name,
          type: step.type,
          completedIn: completedIn(step)!,
        })),
      },
    });
    return {
      run: inserted,
      committed: {
        id,
        steps: remaining,
        moldId: source.mold_id,
        moldSlug: source.mold_slug,
        moldName: source.mold_name,
      },
    };
  });
  await launchRun(deps, caller, committed, {
    ...runEvent('retry', id),
    eventType: 'forge.run.retried',
    metadata: { mold: committed.moldSlug, retry_of: request.runId, from_step: committed.steps[0]?.position ?? null },
  });
  return run;
}
