import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import type { DecisionKind, LogLevel, MarkRunResult, RunStatus, RunStepSpec, StepStatus } from './types';
import type { RunDecisionState } from './decisionRules';

// SQL of runs, their steps, logs and decisions: used by the API and by the forge activities.

const TERMINAL = ['completed', 'failed', 'cancelled', 'skipped'];

interface RunRow {
  id: string;
  mold_slug: string;
  mold_version: number;
  parameters: Record<string, unknown>;
  status: RunStatus;
  error: string | null;
  started_by: string;
  workflow_id: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

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
    created_at: iso(row.created_at),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

const RUN_COLUMNS = [
  'id',
  'mold_slug',
  'mold_version',
  'parameters',
  'status',
  'error',
  'started_by',
  'workflow_id',
  'created_at',
  'started_at',
  'finished_at',
];

export async function insertRun(
  trx: Knex,
  run: {
    id: string;
    tenantId: string;
    moldId: string;
    moldSlug: string;
    moldVersion: number;
    moldSnapshot: unknown;
    parameters: Record<string, unknown>;
    startedBy: string;
    workflowId: string;
    steps: RunStepSpec[];
  },
) {
  const [row] = await trx('runs')
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
    })
    .returning<RunRow[]>(RUN_COLUMNS);
  if (run.steps.length) {
    await trx('run_steps').insert(
      run.steps.map((step) => ({
        tenant_id: run.tenantId,
        run_id: run.id,
        position: step.position,
        name: step.name,
        type: step.type,
      })),
    );
  }
  return toRun(row);
}

export async function findRun(trx: Knex, id: string) {
  const row = await trx('runs').where({ id }).first<RunRow>(RUN_COLUMNS);
  if (!row) return undefined;
  const [steps, decisions] = await Promise.all([
    trx('run_steps')
      .where({ run_id: id })
      .orderBy('position')
      .select('position', 'name', 'type', 'status', 'error', 'output', 'started_at', 'finished_at'),
    trx('run_decisions')
      .where({ run_id: id })
      .orderBy('created_at')
      .select('decision', 'step_position', 'actor', 'comment', 'created_at'),
  ]);
  return {
    ...toRun(row),
    steps: steps.map((s) => ({ ...s, started_at: iso(s.started_at), finished_at: iso(s.finished_at) })),
    decisions: decisions.map((d) => ({ ...d, created_at: iso(d.created_at) })),
  };
}

export async function listRuns(trx: Knex, filter: { moldSlug?: string; status?: string }, window: OffsetWindow) {
  const query = trx('runs').modify((q) => {
    if (filter.moldSlug) q.where({ mold_slug: filter.moldSlug });
    if (filter.status) q.where({ status: filter.status });
  });
  const [rows, [{ total }]] = await Promise.all([
    query
      .clone()
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(window.limit)
      .offset(window.offset)
      .select<RunRow[]>(RUN_COLUMNS),
    query.clone().count<{ total: string }[]>('* as total'),
  ]);
  return { runs: rows.map(toRun), total: Number(total) };
}

/**
 * Terminal runs never change again, so a late or repeated write cannot undo an outcome.
 * `not-visible`: the API starts the workflow before its transaction commits the run.
 * The row lock orders this write against a decision, which the API takes under the same lock:
 * a run whose cancel was accepted is not ended any other way (`cancel-accepted`).
 */
export async function markRun(trx: Knex, runId: string, status: RunStatus, error?: string): Promise<MarkRunResult> {
  const run = await trx('runs').where({ id: runId }).forNoKeyUpdate().first('status');
  if (!run) return 'not-visible';
  if (TERMINAL.includes(run.status)) return 'written';
  if (
    (status === 'completed' || status === 'failed') &&
    (await trx('run_decisions').where({ run_id: runId, decision: 'cancel' }).first('id'))
  ) {
    return 'cancel-accepted';
  }
  await trx('runs')
    .where({ id: runId })
    .update({
      status,
      error: error ?? null,
      started_at: trx.raw('coalesce(started_at, now())'),
      finished_at: TERMINAL.includes(status) ? trx.fn.now() : null,
    });
  return 'written';
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
    .whereNotIn('status', TERMINAL)
    .update({
      status,
      error: extra.error ?? null,
      ...(extra.output !== undefined && { output: JSON.stringify(extra.output) }),
      ...(status === 'running' && { started_at: trx.fn.now() }),
      ...(TERMINAL.includes(status) && { finished_at: trx.fn.now() }),
    });
}

/** Closes every unfinished step from `fromPosition` on (skipped after a failure, cancelled). */
export async function markOpenSteps(trx: Knex, runId: string, fromPosition: number, status: StepStatus): Promise<void> {
  await trx('run_steps')
    .where({ run_id: runId })
    .andWhere('position', '>=', fromPosition)
    .whereNotIn('status', TERMINAL)
    .update({ status, finished_at: trx.fn.now() });
}

/** Advisory-lock class of a run's log appends (the run id's hash is the object). */
const RUN_LOG_LOCK = 0x5_106;

/**
 * Appends lines to a run's log. Appends to one run take turns (a lock held until their
 * transaction ends), so their ids commit in increasing order and a reader that follows
 * `id > last seen` (the log stream) never passes over a line committed late. `once`: a line
 * already in the log is not added again (the workflow's own lines, such as a decision, which a
 * retried workflow task would otherwise log twice); script output may repeat itself.
 */
export async function appendLogs(
  trx: Knex,
  tenantId: string,
  runId: string,
  lines: { position?: number; level?: LogLevel; message: string }[],
  options: { once?: boolean } = {},
): Promise<void> {
  if (!lines.length) return;
  await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [RUN_LOG_LOCK, runId]);
  const logged = options.once
    ? new Set(
        (await trx('run_logs')
          .where({ run_id: runId })
          .whereIn(
            'message',
            lines.map((line) => line.message),
          )
          .pluck('message')) as string[],
      )
    : new Set<string>();
  const fresh = lines.filter((line) => !logged.has(line.message));
  if (!fresh.length) return;
  await trx('run_logs').insert(
    fresh.map((line) => ({
      tenant_id: tenantId,
      run_id: runId,
      step_position: line.position ?? null,
      level: line.level ?? 'info',
      message: line.message,
    })),
  );
}

export async function listLogs(trx: Knex, runId: string, afterId = 0) {
  const rows = await trx('run_logs')
    .where({ run_id: runId })
    .andWhere('id', '>', afterId)
    .orderBy('id')
    .select('id', 'step_position', 'level', 'message', 'created_at');
  return rows.map((r) => ({ ...r, id: Number(r.id), created_at: iso(r.created_at) }));
}

/**
 * Locks the run's row for a decision and reads what deciding depends on: its status, the step
 * waiting for approval and the decisions taken so far. Decisions on one run are thus serial.
 * A no-key lock: it orders decisions and status writes, but lets the workflow keep inserting
 * log lines (their foreign key only needs a key-share lock on the run).
 */
export async function lockRunForDecision(
  trx: Knex,
  runId: string,
): Promise<(RunDecisionState & { workflowId: string }) | undefined> {
  const run = await trx('runs').where({ id: runId }).forNoKeyUpdate().first('status', 'workflow_id');
  if (!run) return undefined;
  const [awaiting, decisions] = await Promise.all([
    trx('run_steps').where({ run_id: runId, status: 'awaiting_approval' }).orderBy('position').first('position'),
    trx('run_decisions').where({ run_id: runId }).orderBy('created_at').select('decision', 'step_position', 'actor'),
  ]);
  return { status: run.status, workflowId: run.workflow_id, awaitingPosition: awaiting?.position ?? null, decisions };
}

/**
 * Records a decision (an approve or reject with the step it answers). Returns false when the
 * run already has it: the unique indexes allow one per step and one cancel per run.
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
  },
): Promise<boolean> {
  const inserted = await trx('run_decisions')
    .insert({
      tenant_id: decision.tenantId,
      run_id: decision.runId,
      decision: decision.kind,
      step_position: decision.position,
      actor: decision.actor,
      comment: decision.comment ?? null,
    })
    .onConflict()
    .ignore()
    .returning('id');
  return inserted.length > 0;
}

/** Counts by status, and per mold: runs, outcomes, success rate and mean duration. */
export async function runStats(trx: Knex) {
  const [byStatus, byMold] = await Promise.all([
    trx('runs').groupBy('status').select('status').count<{ status: string; count: string }[]>('* as count'),
    trx('runs')
      .groupBy('mold_slug')
      .orderBy('mold_slug')
      .select(
        'mold_slug',
        trx.raw('count(*)::int as runs'),
        trx.raw("count(*) filter (where status = 'completed')::int as completed"),
        trx.raw("count(*) filter (where status = 'failed')::int as failed"),
        trx.raw(
          'avg(extract(epoch from finished_at - started_at)) filter (where finished_at is not null and started_at is not null) as mean_duration_seconds',
        ),
      ),
  ]);
  const counts = Object.fromEntries(byStatus.map((row) => [row.status, Number(row.count)]));
  const successRate = (completed: number, failed: number) =>
    completed + failed ? completed / (completed + failed) : null;
  const completed = counts.completed ?? 0;
  const failed = counts.failed ?? 0;
  return {
    total_runs: Object.values(counts).reduce((sum, n) => sum + n, 0),
    by_status: Object.fromEntries(
      ['pending', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'].map((s) => [s, counts[s] ?? 0]),
    ),
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

const FINISHED: RunStatus[] = ['completed', 'failed', 'cancelled'];
export const isFinished = (status: RunStatus) => FINISHED.includes(status);

export async function runStatus(trx: Knex, runId: string): Promise<RunStatus | undefined> {
  return (await trx('runs').where({ id: runId }).first('status'))?.status;
}
