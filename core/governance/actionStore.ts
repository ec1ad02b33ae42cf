import type { Knex } from 'knex';
import { givenFilters, statement, whereGiven, type Placeholders } from '../../db/statements';
import type { OffsetWindow } from '../paging';
import { isoTimestamp } from '../timestamps';
import {
  ACTION_PRIORITIES,
  ACTION_STATUSES,
  ACTIONABLE_STATUSES,
  FINAL_STATUSES,
  type ActionFilter,
  type ActionPriority,
  type ActionStatus,
  type ActionUpdate,
  type GovernanceAction,
} from './types';

// Governance actions. A soft-deleted action (deleted_at set) stays in the table and is left out
// of every read, list and count here.

const sqlList = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');
const ACTIONABLE_SQL = `a.status in (${sqlList(ACTIONABLE_STATUSES)})`;
const FINAL_SQL = `a.status in (${sqlList(FINAL_STATUSES)})`;
/** Past its due date (the day in UTC) with work still to do. */
const OVERDUE_SQL = `(a.due_date < (now() at time zone 'UTC')::date and ${ACTIONABLE_SQL})`;

const actionColumns = (q: Knex) => [
  'a.id',
  'a.title',
  'a.description',
  'a.type',
  'a.status',
  'a.priority',
  'a.entity_id',
  'e.name as entity_name',
  'a.assigned_to',
  'a.created_by',
  'a.resolution_notes',
  q.raw(`to_char(a.due_date, 'YYYY-MM-DD') as due_date`),
  'a.source_type',
  'a.source_id',
  isoTimestamp(q, 'a.created_at', 'created_at'),
  isoTimestamp(q, 'a.updated_at', 'updated_at'),
];

const liveActions = (q: Knex) =>
  q('governance_actions as a').leftJoin('entities as e', 'e.id', 'a.entity_id').whereNull('a.deleted_at');

const EQUAL_FILTERS = {
  status: 'a.status',
  priority: 'a.priority',
  type: 'a.type',
  entity_id: 'a.entity_id',
  assigned_to: 'a.assigned_to',
  source_type: 'a.source_type',
} as const;
type EqualFilter = keyof typeof EQUAL_FILTERS;

interface ListShape {
  equal: EqualFilter[];
  overdue: boolean | null;
  closed: boolean | null;
  actionable: boolean | null;
}

const shapeOf = (filter: ActionFilter): ListShape => ({
  equal: givenFilters(filter, EQUAL_FILTERS),
  overdue: filter.overdue ?? null,
  closed: filter.closed ?? null,
  actionable: filter.actionable ?? null,
});

const whereFlag = (query: Knex.QueryBuilder, sql: string, flag: boolean | null) => {
  if (flag !== null) query.whereRaw(flag ? sql : `not ${sql}`);
};

function filtered(q: Knex, values: Placeholders<Record<EqualFilter, string>>, shape: ListShape) {
  const query = whereGiven(liveActions(q), EQUAL_FILTERS, values, shape.equal);
  // A due date's absence is not overdue: `coalesce` keeps `not` from turning null into null.
  whereFlag(query, `coalesce(${OVERDUE_SQL}, false)`, shape.overdue);
  whereFlag(query, FINAL_SQL, shape.closed);
  whereFlag(query, ACTIONABLE_SQL, shape.actionable);
  return query;
}

type ListValues = Record<EqualFilter, string> & OffsetWindow;

const actionPage = statement<GovernanceAction, ListValues, ListShape>((q, values, shape) =>
  filtered(q, values, shape)
    .orderBy([
      { column: 'a.created_at', order: 'desc' },
      { column: 'a.id', order: 'desc' },
    ])
    .limit(values.limit)
    .offset(values.offset)
    .select(actionColumns(q)),
);

interface SummaryRow {
  total: string;
  open: string;
  in_progress: string;
  overdue: string;
}

const actionSummary = statement<SummaryRow, Record<EqualFilter, string>, ListShape>((q, values, shape) =>
  filtered(q, values, shape).select(
    q.raw('count(*) as total'),
    q.raw(`count(*) filter (where a.status = 'open') as open`),
    q.raw(`count(*) filter (where a.status = 'in_progress') as in_progress`),
    q.raw(`count(*) filter (where ${OVERDUE_SQL}) as overdue`),
  ),
);

export interface ActionSummary {
  open: number;
  in_progress: number;
  overdue: number;
}

/** A page of the filtered actions, newest first, with the filtered set's total and summary. */
export async function listActions(
  db: Knex,
  filter: ActionFilter,
  window: OffsetWindow,
): Promise<{ actions: GovernanceAction[]; total: number; summary: ActionSummary }> {
  const shape = shapeOf(filter);
  const values = filter as Record<EqualFilter, string>;
  const [actions, [counts]] = await Promise.all([
    actionPage.rows(db, { ...values, ...window }, shape),
    actionSummary.rows(db, values, shape),
  ]);
  return {
    actions,
    total: Number(counts.total),
    summary: { open: Number(counts.open), in_progress: Number(counts.in_progress), overdue: Number(counts.overdue) },
  };
}

const actionById = statement<GovernanceAction, { id: string }>((q, { id }) =>
  liveActions(q).where('a.id', id).first(actionColumns(q)),
);

export const getAction = (db: Knex, id: string): Promise<GovernanceAction | undefined> => actionById.first(db, { id });

/** The action's status and entity, its row locked until the transaction ends; undefined when deleted or unknown. */
export const lockAction = (
  db: Knex,
  id: string,
): Promise<{ status: ActionStatus; entity_id: string | null; title: string; assigned_to: string | null } | undefined> =>
  db('governance_actions')
    .where({ id })
    .whereNull('deleted_at')
    .forUpdate()
    .first('status', 'entity_id', 'title', 'assigned_to');

export interface NewActionRow {
  tenant_id: string;
  title: string;
  description: string | null;
  type: string;
  priority: ActionPriority;
  entity_id: string | null;
  assigned_to: string | null;
  created_by: string;
  due_date: string | null;
  source_type: string;
  source_id: string | null;
}

/**
 * Inserts an action; for a source other than `manual`, only when none exists for its source and
 * entity (governance_actions_once): the id, or undefined when one existed.
 */
export async function insertAction(db: Knex, row: NewActionRow): Promise<string | undefined> {
  const query = db('governance_actions').insert(row);
  if (row.source_type !== 'manual') {
    query.onConflict(db.raw(`(tenant_id, source_type, source_id, entity_id) where source_type <> 'manual'`)).ignore();
  }
  const [inserted] = await query.returning('id');
  return inserted?.id as string | undefined;
}

/** The platform-opened action of this source and entity, deleted or not. */
export const actionOfSource = async (
  db: Knex,
  source: { source_type: string; source_id: string | null; entity_id: string | null },
): Promise<string | undefined> =>
  (
    await db('governance_actions')
      .where({ source_type: source.source_type })
      .whereRaw('source_id is not distinct from ? and entity_id is not distinct from ?', [
        source.source_id,
        source.entity_id,
      ])
      .first('id')
  )?.id;

export async function updateAction(db: Knex, id: string, changes: ActionUpdate): Promise<void> {
  await db('governance_actions')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() });
}

/** Soft-deletes a live action: its entity (null when it has none), or undefined when there was none to delete. */
export async function softDeleteAction(db: Knex, id: string): Promise<{ entity_id: string | null } | undefined> {
  const [row] = await db('governance_actions')
    .where({ id })
    .whereNull('deleted_at')
    .update({ deleted_at: db.fn.now(), updated_at: db.fn.now() })
    .returning('entity_id');
  return row;
}

/**
 * Sets `status` on the live, non-final actions of `ids` not already in it, in one statement:
 * the rows changed, each with the status it had.
 */
export async function bulkSetStatus(
  db: Knex,
  ids: string[],
  status: ActionStatus,
): Promise<{ id: string; entity_id: string | null; previous: ActionStatus }[]> {
  const { rows } = await db.raw(
    `update governance_actions a set status = ?, updated_at = now()
       from (select id, status from governance_actions
              where id = any(?::uuid[]) and deleted_at is null and status not in (${sqlList(FINAL_STATUSES)})
                and status <> ?
              order by id for update) as before
      where a.id = before.id
      returning a.id, a.entity_id, before.status as previous`,
    [status, ids, status],
  );
  return rows;
}

interface DashboardRow extends Record<ActionStatus | ActionPriority, string> {
  total: string;
  overdue: string;
  unassigned: string;
}

const dashboardCounts = statement<DashboardRow>((q) =>
  liveActions(q).select(
    q.raw('count(*) as total'),
    ...ACTION_STATUSES.map((status) => q.raw(`count(*) filter (where a.status = '${status}') as ${status}`)),
    ...ACTION_PRIORITIES.map((priority) => q.raw(`count(*) filter (where a.priority = '${priority}') as ${priority}`)),
    q.raw(`count(*) filter (where ${OVERDUE_SQL}) as overdue`),
    q.raw(`count(*) filter (where a.assigned_to is null and ${ACTIONABLE_SQL}) as unassigned`),
  ),
);

export interface GovernanceDashboard {
  total_actions: number;
  by_status: Record<ActionStatus, number>;
  by_priority: Record<ActionPriority, number>;
  /** Actionable actions past their due date. */
  overdue: number;
  /** Actionable actions nobody is assigned to. */
  unassigned: number;
}

export async function governanceDashboard(db: Knex): Promise<GovernanceDashboard> {
  const [row] = await dashboardCounts.rows(db);
  const count = (names: readonly string[]) =>
    Object.fromEntries(names.map((name) => [name, Number(row[name as ActionStatus])]));
  return {
    total_actions: Number(row.total),
    by_status: count(ACTION_STATUSES) as Record<ActionStatus, number>,
    by_priority: count(ACTION_PRIORITIES) as Record<ActionPriority, number>,
    overdue: Number(row.overdue),
    unassigned: Number(row.unassigned),
  };
}
