import type { Knex } from 'knex';
import { givenFilters, statement, whereGiven, type Placeholders } from '../../db/statements';
import { keysetStatement, type DirectedKeysetWindow, type KeysetOrder, type KeysetRow } from '../paging';
import { GRADES, type Grade } from '../scorecards/types';
import { isoTimestamp } from '../timestamps';
import {
  FINDING_SEVERITIES,
  type FindingFilter,
  type FindingSeverity,
  type FindingSource,
  type FindingStatus,
  type SecurityFinding,
} from './types';

// Security findings, one row per (entity, type, fingerprint).

const findingColumns = (q: Knex) => [
  'f.id',
  'f.entity_id',
  'e.name as entity_name',
  'f.type',
  'f.severity',
  'f.status',
  'f.title',
  'f.description',
  'f.remediation',
  'f.source',
  'f.fingerprint',
  isoTimestamp(q, 'f.created_at', 'created_at'),
  isoTimestamp(q, 'f.updated_at', 'updated_at'),
  isoTimestamp(q, 'f.resolved_at', 'resolved_at'),
];

const findings = (q: Knex) => q('security_findings as f').join('entities as e', 'e.id', 'f.entity_id');

const findingById = statement<SecurityFinding, { id: string }>((q, { id }) =>
  findings(q).where('f.id', id).first(findingColumns(q)),
);

export const getFinding = (db: Knex, id: string): Promise<SecurityFinding | undefined> => findingById.first(db, { id });

export interface FindingRow {
  tenant_id: string;
  entity_id: string;
  type: string;
  severity: FindingSeverity;
  title: string;
  description: string | null;
  remediation: string | null;
  source: FindingSource;
  fingerprint: string;
}

export interface UpsertedFinding {
  id: string;
  status: FindingStatus;
  inserted: boolean;
  /** The status before this report; null when it inserted the row. */
  previous_status: FindingStatus | null;
}

/**
 * Opens a finding or refreshes the one of the same (entity, type, fingerprint), as one
 * INSERT ... ON CONFLICT, so concurrent reports make one row. A refresh sets the severity and
 * title, and the description and remediation when given; it reopens a resolved finding and
 * leaves any other status (a false positive stays one) and the first reporter's source.
 */
export async function upsertFinding(db: Knex, row: FindingRow): Promise<UpsertedFinding> {
  const { rows } = await db.raw(
    `with prior as (
       select status from security_findings where entity_id = :entity_id and type = :type and fingerprint = :fingerprint
     )
     insert into security_findings as f
       (tenant_id, entity_id, type, severity, title, description, remediation, source, fingerprint)
     values (:tenant_id, :entity_id, :type, :severity, :title, :description, :remediation, :source, :fingerprint)
     on conflict (entity_id, type, fingerprint) do update set
       severity = excluded.severity,
       title = excluded.title,
       description = coalesce(excluded.description, f.description),
       remediation = coalesce(excluded.remediation, f.remediation),
       status = case when f.status = 'resolved' then 'open' else f.status end,
       resolved_at = case when f.status = 'resolved' then null else f.resolved_at end,
       updated_at = now()
     returning f.id, f.status, (f.xmax = 0) as inserted, (select status from prior) as previous_status`,
    { ...row },
  );
  const [result] = rows as UpsertedFinding[];
  // A concurrent report may insert between `prior`'s snapshot and the conflict: then it was open.
  return { ...result, previous_status: result.inserted ? null : (result.previous_status ?? 'open') };
}

/** The finding's status and entity, its row locked until the transaction ends. */
export const lockFinding = (db: Knex, id: string): Promise<{ status: FindingStatus; entity_id: string } | undefined> =>
  db('security_findings').where({ id }).forUpdate().first('status', 'entity_id');

/** Sets a status; `resolved_at` is set when it becomes resolved and cleared otherwise. */
export async function setFindingStatus(db: Knex, id: string, status: FindingStatus): Promise<void> {
  await db('security_findings')
    .where({ id })
    .update({
      status,
      resolved_at: status === 'resolved' ? db.raw('coalesce(resolved_at, now())') : null,
      updated_at: db.fn.now(),
    });
}

/** Resolves the entity's open and acknowledged findings of `source` whose fingerprint is listed. */
export async function resolveOpenFindings(
  db: Knex,
  criteria: { entityId: string; source: FindingSource; fingerprints: string[] },
): Promise<{ id: string; type: string; fingerprint: string; previous: FindingStatus }[]> {
  if (criteria.fingerprints.length === 0) return [];
  const { rows } = await db.raw(
    `update security_findings f set status = 'resolved', resolved_at = now(), updated_at = now()
       from (select id, status from security_findings
              where entity_id = ? and source = ? and fingerprint = any(?) and status in ('open', 'acknowledged')
              order by id for update) as before
      where f.id = before.id
      returning f.id, f.type, f.fingerprint, before.status as previous`,
    [criteria.entityId, criteria.source, criteria.fingerprints],
  );
  return rows;
}

const EQUAL_FILTERS = {
  severity: 'f.severity',
  entity_id: 'f.entity_id',
  type: 'f.type',
  status: 'f.status',
} as const;
type EqualFilter = keyof typeof EQUAL_FILTERS;
type FilterValues = Record<EqualFilter, string>;

const NEWEST_FIRST: KeysetOrder = {
  columns: [
    { column: 'f.created_at', kind: 'timestamp' },
    { column: 'f.id', kind: 'uuid' },
  ],
  direction: 'desc',
};

const filteredFindings = (q: Knex, values: Placeholders<FilterValues>, shape: EqualFilter[]) =>
  whereGiven(findings(q), EQUAL_FILTERS, values, shape);

const findingPage = keysetStatement({
  order: NEWEST_FIRST,
  build: (q, values: Placeholders<FilterValues>, shape: EqualFilter[]) =>
    filteredFindings(q, values, shape).select(findingColumns(q)),
  toItem: (row: SecurityFinding) => row,
});

/** A page of the filtered findings, newest first. */
export const listFindings = (
  db: Knex,
  filter: FindingFilter,
  window: DirectedKeysetWindow,
): Promise<KeysetRow<SecurityFinding>[]> =>
  findingPage(db, window, filter as FilterValues, givenFilters(filter, EQUAL_FILTERS));

const findingCount = statement<{ count: string }, FilterValues, EqualFilter[]>((q, values, shape) =>
  filteredFindings(q, values, shape).count('* as count'),
);

export async function countFindings(db: Knex, filter: FindingFilter): Promise<number> {
  const [{ count }] = await findingCount.rows(db, filter as FilterValues, givenFilters(filter, EQUAL_FILTERS));
  return Number(count);
}

type GradeCountRow = Record<Grade | 'ungraded', string> & { total_entities: string; mean_score: string | null };

const gradeCounts = statement<GradeCountRow>((q) =>
  q('entities as e')
    .leftJoin('entity_scorecards as s', 's.entity_id', 'e.id')
    .select(
      q.raw('count(*) as total_entities'),
      q.raw('avg(s.score)::float8 as mean_score'),
      ...GRADES.map((grade) => q.raw(`count(*) filter (where s.grade = '${grade}') as "${grade}"`)),
      q.raw('count(*) filter (where s.grade is null) as ungraded'),
    ),
);

type SeverityCountRow = Record<FindingSeverity, string>;

const activeFindingCounts = statement<SeverityCountRow>((q) =>
  q('security_findings')
    .whereIn('status', ['open', 'acknowledged'])
    .select(
      FINDING_SEVERITIES.map((severity) => q.raw(`count(*) filter (where severity = '${severity}') as ${severity}`)),
    ),
);

export interface GradeCounts {
  total_entities: number;
  /** The mean weighted total of the scored entities; null when none is scored. */
  mean_score: number | null;
  by_grade: Record<Grade | 'ungraded', number>;
}

export async function entityGradeCounts(db: Knex): Promise<GradeCounts> {
  const [row] = await gradeCounts.rows(db);
  return {
    total_entities: Number(row.total_entities),
    mean_score: row.mean_score === null ? null : Number(row.mean_score),
    by_grade: Object.fromEntries(
      [...GRADES, 'ungraded' as const].map((grade) => [grade, Number(row[grade])]),
    ) as Record<Grade | 'ungraded', number>,
  };
}

/** Open and acknowledged findings by severity. */
export async function activeFindingsBySeverity(db: Knex): Promise<Record<FindingSeverity, number>> {
  const [row] = await activeFindingCounts.rows(db);
  return Object.fromEntries(FINDING_SEVERITIES.map((severity) => [severity, Number(row[severity])])) as Record<
    FindingSeverity,
    number
  >;
}
