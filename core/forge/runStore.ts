import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import { approvalTimeoutSeconds, namesApprovers, ruleOf } from './approvalRules';
import {
  RUN_STATUSES,
  type ActionType,
  type MoldAction,
  type DecisionKind,
  type MarkRunResult,
  type RunStatus,
  type RunStepSpec,
  type StepStatus,
  RUN_FIELDS,
} from './types';
import type { RunDecisionState } from './decisionRules';
import { toIso, toIsoOrNull } from '../timestamps';
import { givenFilters, statement, whereGiven, type Placeholders } from '../../db/statements';

// SQL of runs, their steps and decisions: used by the API and by the forge activities (their logs:
// runLogStore.ts).

export const FINISHED_RUN: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];
const FINISHED_STEP: readonly StepStatus[] = [...FINISHED_RUN, 'skipped'];
export const isFinished = (status: RunStatus) => FINISHED_RUN.includes(status);

/**
 * Channel of `pg_notify` (delivered at commit) when a run's log gets lines or its status is
 * written; the payload is the run id. The API's log streams follow it instead of polling.
 */
export const RUN_CHANGES_CHANNEL = 'forge_run_changes';

const notifyRunChanged = (trx: Knex, runId: string) => trx.raw('select pg_notify(?, ?)', [RUN_CHANGES_CHANNEL, runId]);

interface RunRow {
  id: string;
  mold_slug: string;
  mold_version: number;
  parameters: Record<string, unknown>;
  status: RunStatus;
  error: string | null;
  started_by: string;
  workflow_id: string;
  retry_of: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

function toRun(row: RunRow) {
  return {
    id: row.id,
    mold_slug: row.mold_slug,
    mold_version: row.mold_version,
    parameters: row.parameters,
    status: row.status,
    error: row.error,
    started_by: row.started_by,
    workflow_id: row.workflow_id,
    retry_of: row.retry_of,
    created_at: toIso(row.created_at),
    started_at: toIsoOrNull(row.started_at),
    finished_at: toIsoOrNull(row.finished_at),
  };
}

export async function insertRun(
  trx: Knex,
  run: {
    id: string;
    tenantId: string;
    moldId: string | null;
    moldSlug: string;
    moldVersion: number;
    moldSnapshot: unknown;
    parameters: Record<string, unknown>;
    startedBy: string;
    workflowId: string;
    steps: RunStepSpec[];
    /** A retry: the failed run it retries, and its steps that completed there (skipped here). */
    retry?: { of: string; completed: { position: number; name: string; type: ActionType; completedIn: string }[] };
  },
) {
  const inserted = trx('runs')
    .insert({
      id: run.id,
      tenant_id: run.tenantId,
      mold_id: run.moldId,
      mold_slug: run.moldSlug,
      mold_version: run.moldVersion,
      mold_snapshot: JSON.stringify(run.moldSnapshot),
      parameters: JSON.stringify(run.parameters),
      started_by: run.startedBy,
      workflow_id: run.workflowId,
      retry_of: run.retry?.of ?? null,
    })
    .returning(RUN_FIELDS);
  // The run and its steps in one statement (one round trip): the steps' foreign key is checked
  // at its end, when the run's row is there.
  const query = trx.with('run', inserted);
  // A retry's steps that completed in the run it retries are skipped here, pointing to it.
  const steps = [
    ...(run.retry?.completed ?? []).map((step) => ({
      position: step.position,
      name: step.name,
      type: step.type,
      status: 'skipped',
      completed_in: step.completedIn,
      finished_at: trx.fn.now(),
    })),
    ...run.steps.map((step) => ({ position: step.position, name: step.name, type: step.type })),
  ];
  if (steps.length) {
    // Keys a row leaves out are written as their column's default.
    query.with(
      'steps',
      trx('run_steps').insert(steps.map((step) => ({ tenant_id: run.tenantId, run_id: run.id, ...step }))),
    );
  }
  const [row] = await query.select<RunRow[]>('*').from('run');
  return toRun(row);
}

const runById = statement<RunRow, { id: string }>((q, { id }) => q('runs').where({ id }).first(RUN_FIELDS));

const stepsOfRun = statement<StepRow, { runId: string }>((q, { runId }) =>
  q('run_steps')
    .where({ run_id: runId })
    .orderBy('position')
    .select('position', 'name', 'type', 'status', 'error', 'output', 'completed_in', 'started_at', 'finished_at'),
);

const decisionsOfRun = statement<DecisionRow, { runId: string }>((q, { runId }) =>
  q('run_decisions')
    .where({ run_id: runId })
    .orderBy('created_at')
    .select('decision', 'step_position', 'actor', 'comment', 'satisfied_rule', 'approver_user_id', 'created_at'),
);

/** The action a run's step was made from, as the run's copy of its mold has it. */
export async function snapshotAction(trx: Knex, runId: string, position: number): Promise<MoldAction | undefined> {
  const row: { action: MoldAction | null } | undefined = await trx('runs')
    .where({ id: runId })
    .first(trx.raw("mold_snapshot->'actions'->?::int as action", [position]));
  return row?.action ?? undefined;
}

/**
 * Who a step waiting for approval still needs: the rule's approvals left to give and who may
 * give them (as the rule names them; resolved at decision time), and when it stops waiting.
 */
function approvalNeeded(action: MoldAction | undefined, step: StepRow, decisions: DecisionRow[]) {
  const rule = ruleOf(action);
  const received = decisions.filter((d) => d.decision === 'approve' && d.step_position === step.position).length;
  const timeout = action?.approval_timeout ?? null;
  return {
    step_position: step.position,
    required: rule.count,
    received,
    remaining: Math.max(rule.count - received, 0),
    eligible: { teams: rule.teams, roles: rule.roles, users: rule.users, any_forge_writer: !namesApprovers(rule) },
    allow_self_approval: rule.allowSelfApproval,
    timeout,
    expires_at:
      timeout && step.started_at
        ? toIso(new Date(step.started_at.getTime() + approvalTimeoutSeconds(timeout) * 1000))
        : null,
  };
}

export async function findRun(trx: Knex, id: string) {
  const row = await runById.first(trx, { id });
  if (!row) return undefined;
  const [steps, decisions] = await Promise.all([
    stepsOfRun.rows(trx, { runId: id }),
    decisionsOfRun.rows(trx, { runId: id }),
  ]);
  const waiting = row.status === 'awaiting_approval' ? steps.find((s) => s.status === 'awaiting_approval') : undefined;
  const approval = waiting ? approvalNeeded(await snapshotAction(trx, id, waiting.position), waiting, decisions) : null;
  return {
    ...toRun(row),
    steps: steps.map((s) => ({ ...s, started_at: toIsoOrNull(s.started_at), finished_at: toIsoOrNull(s.finished_at) })),
    decisions: decisions.map(({ approver_user_id: _user, ...d }) => ({ ...d, created_at: toIso(d.created_at) })),
    approval,
  };
}

interface StepRow {
  position: number;
  name: string;
  type: ActionType;
  status: StepStatus;
  error: string | null;
  output: unknown;
  /** A step a retry skipped: the run it completed in. */
  completed_in: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

interface DecisionRow {
  decision: DecisionKind;
  step_position: number | null;
  actor: string;
  comment: string | null;
  /** The part of the step's approver rule an approve or reject satisfied (`team:sre`, `forge:write`). */
  satisfied_rule: string | null;
  approver_user_id: string | null;
  created_at: Date;
}

interface RunFilter {
  moldSlug?: string;
  status?: RunStatus;
}

const FILTER_COLUMNS = { moldSlug: 'mold_slug', status: 'status' };

/** Which of a list's filters the request gives. */
type RunListShape = (keyof typeof FILTER_COLUMNS)[];

const filteredRuns = (q: Knex, filter: Placeholders<RunFilter>, shape: RunListShape) =>
  whereGiven(q('runs'), FILTER_COLUMNS, filter, shape);

const runPage = statement<RunRow, RunFilter & OffsetWindow, RunListShape>((q, values, shape) =>
  filteredRuns(q, values, shape)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(values.limit)
    .offset(values.offset)
    .select(RUN_FIELDS),
);

const runCount = statement<{ total: string }, RunFilter, RunListShape>((q, filter, shape) =>
  filteredRuns(q, filter, shape).count('* as total'),
);

export async function listRuns(trx: Knex, filter: RunFilter, window: OffsetWindow) {
  // An empty filter is no filter.
  const shape = givenFilters(
    { moldSlug: filter.moldSlug || undefined, status: filter.status || undefined },
    FILTER_COLUMNS,
  );
  const [rows, [{ total }]] = await Promise.all([
    runPage.rows(trx, { ...filter, ...window }, shape),
    runCount.rows(trx, filter, shape),
  ]);
  return { runs: rows.map(toRun), total: Number(total) };
}

/** A run's status and workflow; `locked`: with its row locked (a no-key lock, see lockRunForDecision). */
const runState = statement<
  { status: RunStatus; workflow_id: string; created_at: Date; started_by: string },
  { id: string },
  'locked' | 'unlocked'
>((q, { id }, lock) =>
  q('runs')
    .where({ id })
    .modify((query) => {
      if (lock === 'locked') query.forNoKeyUpdate();
    })
    .first('status', 'workflow_id', 'created_at', 'started_by'),
);

/**
 * Finished runs never change again, so a late or repeated write cannot undo an outcome
 * (`already-finished`). The row lock orders this write against a decision, which the API takes
 * under the same lock: a run whose cancel was accepted is not ended any other way
 * (`cancel-accepted`).
 */
export async function markRun(trx: Knex, runId: string, status: RunStatus, error?: string): Promise<MarkRunResult> {
  const update = trx('runs')
    .where({ id: runId })
    .update({
      status,
      error: error ?? null,
      started_at: trx.raw('coalesce(started_at, now())'),
      finished_at: isFinished(status) ? trx.fn.now() : null,
    })
    // It skips a finished run, checked on the row version it waited for should a decision hold the row.
    .whereNotIn('status', FINISHED_RUN);
  // Each update goes out with the notification (a run left as it was changes nothing for its
  // followers, who are told at commit anyway).
  if (status !== 'completed' && status !== 'failed') {
    // One statement, which also tells a finished run from one that is not there.
    const [{ rows }] = await Promise.all([
      trx.raw<{ rows: { written: boolean; visible: boolean }[] }>(
        'with written as (?) select exists (select from written) as written, exists (select from runs where id = ?) as visible',
        [update.returning('id'), runId],
      ),
      notifyRunChanged(trx, runId),
    ]);
    if (rows[0].written) return 'written';
    return rows[0].visible ? 'already-finished' : 'not-visible';
  }
  // An ending first takes the row lock, then checks for an accepted cancel in its update: a
  // statement after the lock's, so it sees a decision committed while it waited. Both go out
  // together, the lock first (a query is sent when its `then` is called: the lock's as its
  // statement runs, the update's by Promise.all); the lock's answer tells why nothing was written.
  const locked = runState.rows(trx, { id: runId }, 'locked');
  update.whereNotExists(trx('run_decisions').where({ run_id: runId, decision: 'cancel' }));
  const [[run], written] = await Promise.all([locked, update, notifyRunChanged(trx, runId)]);
  if (!run) return 'not-visible';
  if (isFinished(run.status)) return 'already-finished';
  return written > 0 ? 'written' : 'cancel-accepted';
}

/**
 * Ends a run whose workflow could not be started: failed with `error`, its steps skipped. Only a
 * run still pending, since a start that failed ambiguously may have started the workflow after
 * all; that workflow then finds the run finished at its first write and stops.
 */
export async function failUnstartedRun(trx: Knex, runId: string, error: string): Promise<void> {
  await trx('runs')
    .where({ id: runId, status: 'pending' })
    .update({ status: 'failed', error, finished_at: trx.fn.now() });
  await markOpenSteps(trx, runId, 0, 'skipped');
  await notifyRunChanged(trx, runId);
}

/**
 * A finished step never changes again: bookkeeping runs as local activities, which run again
 * when a workflow task is retried, and a retry may see the action's result after the cancel
 * that already closed the step.
 */
export async function markStep(
  trx: Knex,
  runId: string,
  position: number,
  status: StepStatus,
  extra: { error?: string; output?: unknown } = {},
): Promise<void> {
  await trx('run_steps')
    .where({ run_id: runId, position })
    .whereNotIn('status', FINISHED_STEP)
    .update({
      status,
      error: extra.error ?? null,
      ...(extra.output !== undefined && { output: JSON.stringify(extra.output) }),
      // A retried action marks its step running again; it started with its first attempt. An
      // approval step starts as it begins to wait (its timeout counts from then).
      ...((status === 'running' || status === 'awaiting_approval') && {
        started_at: trx.raw('coalesce(started_at, now())'),
      }),
      ...(FINISHED_STEP.includes(status) && { finished_at: trx.fn.now() }),
    });
}

/** Closes every unfinished step from `fromPosition` on (skipped after a failure, cancelled). */
export async function markOpenSteps(trx: Knex, runId: string, fromPosition: number, status: StepStatus): Promise<void> {
  await trx('run_steps')
    .where({ run_id: runId })
    .andWhere('position', '>=', fromPosition)
    .whereNotIn('status', FINISHED_STEP)
    .update({ status, finished_at: trx.fn.now() });
}

const awaitingStep = statement<{ position: number; started_at: Date | null }, { runId: string }>((q, { runId }) =>
  q('run_steps')
    .where({ run_id: runId, status: 'awaiting_approval' })
    .orderBy('position')
    .first('position', 'started_at'),
);

/**
 * Locks the run's row for a decision and reads what deciding depends on: its status, the step
 * waiting for approval and the decisions taken so far. Decisions on one run are thus serial.
 * A no-key lock: it orders decisions and status writes, but lets the workflow keep inserting
 * log lines (their foreign key only needs a key-share lock on the run).
 */
export async function lockRunForDecision(
  trx: Knex,
  runId: string,
): Promise<
  | (RunDecisionState & { workflowId: string; createdAt: Date; startedBy: string; awaitingSince: Date | null })
  | undefined
> {
  const run = await runState.first(trx, { id: runId }, 'locked');
  if (!run) return undefined;
  const [[awaiting], decisions] = await Promise.all([
    awaitingStep.rows(trx, { runId }),
    decisionsOfRun.rows(trx, { runId }),
  ]);
  return {
    status: run.status,
    workflowId: run.workflow_id,
    createdAt: run.created_at,
    startedBy: run.started_by,
    awaitingPosition: awaiting?.position ?? null,
    awaitingSince: awaiting?.started_at ?? null,
    decisions,
  };
}

/**
 * Records a decision (an approve or reject with the step it answers); returns its id, or
 * undefined when the run already has it: the unique indexes allow one approve per user and step,
 * one reject per step and one cancel per run.
 */
export async function insertDecision(
  trx: Knex,
  decision: {
    tenantId: string;
    runId: string;
    kind: DecisionKind;
    position: number | null;
    actor: string;
    comment?: string;
    /** An approve or reject: who decided (the user behind the caller) and the part of the rule they satisfied. */
    approver?: { userId: string; satisfiedRule: string };
  },
): Promise<string | undefined> {
  const [inserted] = await trx('run_decisions')
    .insert({
      tenant_id: decision.tenantId,
      run_id: decision.runId,
      decision: decision.kind,
      step_position: decision.position,
      actor: decision.actor,
      comment: decision.comment ?? null,
      approver_user_id: decision.approver?.userId ?? null,
      satisfied_rule: decision.approver?.satisfiedRule ?? null,
    })
    .onConflict()
    .ignore()
    .returning<{ id: string }[]>('id');
  return inserted?.id;
}

/** Withdraws a decision whose signal could not be sent: the workflow never learnt of it. */
export async function deleteDecision(trx: Knex, decisionId: string): Promise<void> {
  await trx('run_decisions').where({ id: decisionId }).delete();
}

const runsByStatus = statement<{ status: string; count: string }>((q) =>
  q('runs').groupBy('status').select('status').count('* as count'),
);

const runsByMold = statement<{
  mold_slug: string;
  runs: number;
  completed: number;
  failed: number;
  mean_duration_seconds: string | null;
}>((q) =>
  q('runs')
    .groupBy('mold_slug')
    .orderBy('mold_slug')
    .select(
      'mold_slug',
      q.raw('count(*)::int as runs'),
      q.raw("count(*) filter (where status = 'completed')::int as completed"),
      q.raw("count(*) filter (where status = 'failed')::int as failed"),
      q.raw(
        'avg(extract(epoch from finished_at - started_at)) filter (where finished_at is not null and started_at is not null) as mean_duration_seconds',
      ),
    ),
);

/** Counts by status, and per mold: runs, outcomes, success rate and mean duration. */
export async function runStats(trx: Knex) {
  const [byStatus, byMold] = await Promise.all([runsByStatus.rows(trx), runsByMold.rows(trx)]);
  const counts = Object.fromEntries(byStatus.map((row) => [row.status, Number(row.count)]));
  const successRate = (completed: number, failed: number) =>
    completed + failed ? completed / (completed + failed) : null;
  const completed = counts.completed ?? 0;
  const failed = counts.failed ?? 0;
  return {
    total_runs: Object.values(counts).reduce((sum, n) => sum + n, 0),
    by_status: Object.fromEntries(RUN_STATUSES.map((status) => [status, counts[status] ?? 0])) as Record<
      RunStatus,
      number
    >,
    success_rate: successRate(completed, failed),
    by_mold: byMold.map((row) => ({
      mold_slug: row.mold_slug,
      runs: row.runs,
      completed: row.completed,
      failed: row.failed,
      success_rate: successRate(row.completed, row.failed),
      mean_duration_seconds:
        row.mean_duration_seconds === null ? null : Number(Number(row.mean_duration_seconds).toFixed(3)),
    })),
  };
}

export async function runStatus(trx: Knex, runId: string): Promise<RunStatus | undefined> {
  const run = await runState.first(trx, { id: runId }, 'unlocked');
  return run?.status;
}

/** A run's parameters, which its actions read by run id (they are not in its workflow's history). */
export async function runParameters(trx: Knex, runId: string): Promise<Record<string, unknown> | undefined> {
  const row: { parameters: Record<string, unknown> } | undefined = await trx('runs')
    .where({ id: runId })
    .first('parameters');
  return row?.parameters;
}

interface RetrySourceRow {
  id: string;
  mold_id: string | null;
  mold_slug: string;
  mold_version: number;
  mold_snapshot: { parameters?: unknown[]; actions?: MoldAction[]; requires_approval?: boolean };
  parameters: Record<string, unknown>;
  status: RunStatus;
  /** The mold's name now (its copy keeps none), or its slug once the mold is deleted. */
  mold_name: string;
}

/** A run as a retry reads it: its copy of the mold, its parameters, and where each step got to. */
export async function runToRetry(trx: Knex, runId: string) {
  const row = await trx('runs')
    .where({ id: runId })
    .first<RetrySourceRow | undefined>(
      'id',
      'mold_id',
      'mold_slug',
      'mold_version',
      'mold_snapshot',
      'parameters',
      'status',
      trx.raw('coalesce((select name from molds m where m.id = runs.mold_id), runs.mold_slug) as mold_name'),
    );
  if (!row) return undefined;
  const steps = await trx('run_steps')
    .where({ run_id: runId })
    .orderBy('position')
    .select<{ position: number; name: string; type: ActionType; status: StepStatus; completed_in: string | null }[]>(
      'position',
      'name',
      'type',
      'status',
      'completed_in',
    );
  return { ...row, steps };
}
