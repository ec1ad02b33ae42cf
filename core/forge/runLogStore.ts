import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';
import { toIso } from '../timestamps';
import { FINISHED_RUN, RUN_CHANGES_CHANNEL } from './runStore';
import type { LogLevel, RunStatus } from './types';

// SQL of runs' logs: appended by the forge activities and the workflow, read by the API and its
// log streams.

export interface LogLine {
  position?: number;
  level?: LogLevel;
  message: string;
}

/** Advisory-lock class of a run's log appends (the run id's hash is the object). */
const RUN_LOG_LOCK = 0x5_106;

/** A line as the append statement reads it (jsonb_to_recordset), without anything else its object carries. */
const logRow = ({ position, level, message }: LogLine) => ({ position, level, message });

const lockRunLog = (trx: Knex, runId: string) =>
  trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [RUN_LOG_LOCK, runId]);

/** Which of `messages` the run's log already has. */
const loggedMessages = statement<{ message: string }, { runId: string; messages: string[] }>((q, { runId, messages }) =>
  q('run_logs').where({ run_id: runId }).whereRaw('message = any(?)', [messages]).select('message'),
);

/**
 * Appends lines to a run's log. Appends to one run take turns (a lock held until their
 * transaction ends), so their ids commit in increasing order and a reader that follows
 * `id > last seen` (the log stream) never passes over a line committed late. `once`: a line
 * already in the log is not added again (the workflow's own lines, such as a decision, which a
 * retried workflow task would otherwise log twice); script output may repeat itself.
 * `whileRunOpen`: nothing is added to a run that has finished, as its statement finds it (a
 * line sent in the same write as the status update that decides whether the run goes on).
 * Followers of the log (the API's log streams) are told at commit, on RUN_CHANGES_CHANNEL.
 * `maxRunLines`: the run's log keeps at most that many lines (script output may be endless);
 * the first append past it stores what fits and one line saying the log was truncated, later
 * ones nothing. Lines appended without it (the run's own) are always kept. Answers how many of
 * `lines` were stored.
 */
export async function appendLogs(
  trx: Knex,
  tenantId: string,
  runId: string,
  lines: LogLine[],
  options: { once?: boolean; whileRunOpen?: boolean; maxRunLines?: number } = {},
): Promise<number> {
  if (!lines.length) return 0;
  let fresh = lines;
  if (options.once) {
    // Read under the lock: a line committed by an append that held it is seen here.
    await lockRunLog(trx, runId);
    const rows = await loggedMessages.rows(trx, { runId, messages: lines.map((line) => line.message) });
    const logged = new Set(rows.map((row) => row.message));
    fresh = lines.filter((line) => !logged.has(line.message));
    if (!fresh.length) return 0;
  }
  let stored = fresh.length;
  if (options.maxRunLines !== undefined) {
    ({ fresh, stored } = await withinRunCap(trx, runId, fresh, options.maxRunLines));
    if (!fresh.length) return 0;
  }
  // One statement, one round trip: the lock (taken before any id is drawn, since the ids are
  // drawn as the joined rows come out), the notification, and the lines in their order.
  await trx.raw(
    `with turn as (select pg_advisory_xact_lock(?, hashtext(?))),
          told as (select pg_notify(?, ?))
     insert into run_logs (tenant_id, run_id, step_position, level, message)
     select ?::uuid, ?::uuid, line.position, coalesce(line.level, 'info'), line.message
     from turn, told,
          rows from (jsonb_to_recordset(?::jsonb) as (position integer, level text, message text))
            with ordinality as line (position, level, message, n)
     ${options.whileRunOpen ? 'where exists (select from runs where id = ? and status <> all (?::text[]))' : ''}
     order by line.n`,
    [
      RUN_LOG_LOCK,
      runId,
      RUN_CHANGES_CHANNEL,
      runId,
      tenantId,
      runId,
      JSON.stringify(fresh.map(logRow)),
      ...(options.whileRunOpen ? [runId, [...FINISHED_RUN]] : []),
    ],
  );
  return stored;
}

interface LogRow {
  id: string;
  step_position: number | null;
  level: LogLevel;
  message: string;
  created_at: Date;
}

interface LogWindow {
  afterId: number;
  limit: number;
}

type LogPage = LogWindow & { runId: string };

const LOG_COLUMNS = ['id', 'step_position', 'level', 'message', 'created_at'];

/** Up to `limit` lines of a run's log after line `afterId`, in order (as a query). */
const logLines = (q: Knex, { runId, afterId, limit }: Placeholders<LogPage>) =>
  q('run_logs').where({ run_id: runId }).andWhere('id', '>', afterId).orderBy('id').limit(limit).select(LOG_COLUMNS);

const logPage = statement<LogRow, LogPage>(logLines);

const toLogLine = (row: LogRow) => ({ ...row, id: Number(row.id), created_at: toIso(row.created_at) });

/** Up to `limit` lines of a run's log after line `afterId`, in order. */
export async function listLogs(trx: Knex, runId: string, window: LogWindow) {
  return (await logPage.rows(trx, { runId, afterId: window.afterId, limit: window.limit })).map(toLogLine);
}

const runProgress = statement<{ status: RunStatus } & (LogRow | { [column in keyof LogRow]: null }), LogPage>(
  (q, values) =>
    q('runs as r')
      // A query as a binding is compiled in place (knex's types only list values for joinRaw).
      .joinRaw('left join lateral ? as l on true', [q.raw('?', [logLines(q, values)])])
      .where('r.id', values.runId)
      .orderBy('l.id')
      .select('r.status', ...LOG_COLUMNS.map((column) => `l.${column}`)),
);

/**
 * The run's status (undefined: no such run) and its log lines after `afterId`, read by one
 * statement and so from one snapshot: a finished status comes with every line of the run.
 */
export async function readRunProgress(trx: Knex, runId: string, window: LogWindow) {
  const rows = await runProgress.rows(trx, { runId, afterId: window.afterId, limit: window.limit });
  return {
    status: rows[0]?.status,
    lines: rows.flatMap(({ status: _status, ...line }) => (line.id === null ? [] : [toLogLine(line)])),
  };
}

/** Lines in a run's log, counted up to `limit` (an index-only walk no longer than the cap). */
const runLogLineCount = statement<{ count: string }, { runId: string; limit: number }>((q, { runId, limit }) =>
  q.count('* as count').from(q('run_logs').where({ run_id: runId }).limit(limit).select(q.raw('1')).as('line')),
);

const runLogTruncated = (maxRunLines: number) =>
  `run log truncated at ${maxRunLines} lines: later script output is read but not stored`;

/**
 * What of `lines` fits under the run's cap, counted under the log's lock (so two appends cannot
 * both take the last room), with the line that says the log was truncated when they overflow it
 * and the log does not have that line yet.
 */
async function withinRunCap(
  trx: Knex,
  runId: string,
  lines: LogLine[],
  maxRunLines: number,
): Promise<{ fresh: LogLine[]; stored: number }> {
  await lockRunLog(trx, runId);
  const [{ count }] = await runLogLineCount.rows(trx, { runId, limit: maxRunLines + 1 });
  const room = Math.max(0, maxRunLines - Number(count));
  if (lines.length <= room) return { fresh: lines, stored: lines.length };
  const notice: LogLine = { position: lines[0].position, level: 'warn', message: runLogTruncated(maxRunLines) };
  // Lines logged without the cap may have filled the log before any script output overflowed it.
  const noticed = room === 0 && (await loggedMessages.rows(trx, { runId, messages: [notice.message] })).length > 0;
  return { fresh: [...lines.slice(0, room), ...(noticed ? [] : [notice])], stored: room };
}
