import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';
import { actorOf, type AuditEvent } from '../audit/store';
import type { OffsetWindow } from '../paging';
import { idOr, UUID } from '../ids';
import { statement } from '../../db/statements';
import { toIso } from '../timestamps';

interface TeamRow {
  id: string;
  name: string;
  slug: string;
  description: string;
  metadata: Record<string, unknown>;
  parent_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export type Team = ReturnType<typeof toTeam>;
export type TeamListItem = Team & { member_count: number };

const TEAM_COLUMNS = ['id', 'name', 'slug', 'description', 'metadata', 'parent_id', 'created_at', 'updated_at'];

export const toTeam = (row: TeamRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  metadata: row.metadata,
  parent_id: row.parent_id,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

/** Paths beside `/teams/{id_or_slug}` that a slug would otherwise shadow. */
const ROUTE_WORDS: ReadonlySet<string> = new Set(['org-chart']);

/** A slug must never be read as an id, or as another route, by GET /teams/{id_or_slug}. */
export const isUsableSlug = (slug: string) => slug !== '' && !UUID.test(slug) && !ROUTE_WORDS.has(slug);

/** Teams with their member counts, in one query (counts joined, not fetched per team). */
function teamsWithCounts(q: Knex) {
  return q('teams as t')
    .leftJoin(q('team_members').groupBy('team_id').select('team_id').count('* as n').as('m'), 'm.team_id', 't.id')
    .select(TEAM_COLUMNS.map((column) => `t.${column}`))
    .select(q.raw('coalesce(m.n, 0)::int as member_count'))
    .orderBy([{ column: 't.name' }, { column: 't.slug' }]);
}

type TeamListRow = TeamRow & { member_count: number };

const toListItem = (row: TeamListRow): TeamListItem => ({
  ...toTeam(row),
  member_count: row.member_count,
});

const allTeams = statement<TeamListRow>((q) => teamsWithCounts(q));

/** The whole list: what GET /teams caches per tenant. */
export async function listAllTeams(db: Knex): Promise<TeamListItem[]> {
  return (await allTeams.rows(db)).map(toListItem);
}

const teamPage = statement<TeamListRow, OffsetWindow>((q, { limit, offset }) =>
  teamsWithCounts(q).limit(limit).offset(offset),
);

const teamCount = statement<{ count: string }>((q) => q('teams').count('* as count'));

export async function listTeamsPage(db: Knex, window: OffsetWindow): Promise<{ teams: TeamListItem[]; total: number }> {
  const rows = await teamPage.rows(db, { limit: window.limit, offset: window.offset });
  const [{ count }] = await teamCount.rows(db);
  return { teams: rows.map(toListItem), total: Number(count) };
}

const teamBy = statement<TeamRow, { ref: string }, 'id' | 'slug'>((q, { ref }, column) =>
  q('teams').where(column, ref).first(TEAM_COLUMNS),
);

export async function getTeam(db: Knex, id: string): Promise<Team | undefined> {
  const row = await teamBy.first(db, { ref: id }, 'id');
  return row && toTeam(row);
}

export async function getTeamByIdOrSlug(db: Knex, ref: string): Promise<Team | undefined> {
  const row = await teamBy.first(db, { ref }, idOr(ref, 'slug'));
  return row && toTeam(row);
}

const lockedTeam = statement<{ id: string }, { id: string }>((q, { id }) =>
  q('teams').where({ id }).forShare().first('id'),
);

/** For writes below a team: the share lock keeps it from being deleted until this commits. */
export async function lockTeam(db: Knex, id: string): Promise<boolean> {
  return (await lockedTeam.rows(db, { id })).length > 0;
}

/** Inserts a team; undefined when the slug is taken in this tenant. */
export async function insertTeam(
  db: Knex,
  tenantId: string,
  team: {
    name: string;
    slug: string;
    description: string;
    parent_id: string | null;
    metadata: Record<string, unknown>;
  },
): Promise<Team | undefined> {
  const [row]: TeamRow[] = await db('teams')
    .insert({
      tenant_id: tenantId,
      name: team.name,
      slug: team.slug,
      description: team.description,
      parent_id: team.parent_id,
      metadata: team.metadata,
    })
    .onConflict(['tenant_id', 'slug'])
    .ignore()
    .returning(TEAM_COLUMNS);
  return row && toTeam(row);
}

const definedOnly = (values: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));

export async function updateTeam(
  db: Knex,
  id: string,
  changes: { name?: string; description?: string; parent_id?: string | null; metadata?: Record<string, unknown> },
): Promise<Team | undefined> {
  const [row]: TeamRow[] = await db('teams')
    .where({ id })
    .update({ ...definedOnly(changes), updated_at: db.fn.now() })
    .returning(TEAM_COLUMNS);
  return row && toTeam(row);
}

/** Children keep existing and lose their parent (the foreign key's ON DELETE SET NULL). */
export async function deleteTeam(db: Knex, id: string): Promise<Team | undefined> {
  const [row]: TeamRow[] = await db('teams').where({ id }).del().returning(TEAM_COLUMNS);
  return row && toTeam(row);
}

/**
 * Serialises parent changes within a tenant: two concurrent moves that are each fine alone
 * (A under B, B under A) would together make a cycle.
 */
export async function lockHierarchy(db: Knex, tenantId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?))', [`team-hierarchy:${tenantId}`]);
}

/** Whether `teamId` is `parentId` or one of its ancestors, i.e. whether the move makes a cycle. */
export async function wouldCreateCycle(db: Knex, teamId: string, parentId: string): Promise<boolean> {
  const { rows } = await db.raw(
    `with recursive ancestors(id, parent_id) as (
       select id, parent_id from teams where id = :parentId
       union
       select t.id, t.parent_id from teams t join ancestors a on t.id = a.parent_id
     )
     select exists (select 1 from ancestors where id = :teamId) as cycle`,
    { parentId, teamId },
  );
  return rows[0].cycle;
}

/** One audit entry per team, in one insert: for changes that touch many teams at once. */
export async function recordTeamAudits(
  db: Knex,
  principal: Principal,
  teamIds: string[],
  event: AuditEvent,
): Promise<void> {
  if (!teamIds.length) return;
  await db('audit_log').insert(
    [...new Set(teamIds)].map((id) => ({
      tenant_id: principal.tenantId,
      ...actorOf(principal),
      event_type: event.eventType,
      action: event.action,
      status: event.status ?? 'success',
      target_type: 'team',
      target_id: id,
      metadata: event.metadata ?? {},
    })),
  );
}
