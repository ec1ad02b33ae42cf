import type { Knex } from 'knex';
import { UUID } from '../ids';

// Who an entity's owner is. An owner is free text, read by one rule everywhere (the `team`
// filter, /stats/teams, /stats/unowned, an entity's status): it names a team when it equals the
// team's slug, and a user when it equals the user's email; a user's teams are the teams they are
// a member of.

export interface TeamRef {
  id: string;
  slug: string;
  name: string;
}

export type OwnerKind = 'team' | 'user' | 'unknown' | 'none';

/** The owners that name a team (its slug or id): its slug and its members' emails. */
export function ownersOfTeamSql(db: Knex, team: string): Knex.QueryBuilder {
  const teamMatch = UUID.test(team) ? { 't.id': team } : { 't.slug': team };
  return db
    .from('teams as t')
    .where(teamMatch)
    .select('t.slug as owner')
    .unionAll((q) =>
      q
        .from('teams as t')
        .join('team_members as tm', 'tm.team_id', 't.id')
        .join('users as u', 'u.id', 'tm.user_id')
        .where(teamMatch)
        .select('u.email as owner'),
    );
}

/** What an owner names, and the teams it resolves to, in one query. */
export async function resolveOwner(db: Knex, owner: string | null): Promise<{ kind: OwnerKind; teams: TeamRef[] }> {
  if (owner === null) return { kind: 'none', teams: [] };
  const rows: (Partial<TeamRef> & { kind: 'team' | 'user' })[] = await db
    .from('teams as t')
    .where('t.slug', owner)
    .select(db.raw(`'team' as kind`), 't.id', 't.slug', 't.name')
    .unionAll((q) =>
      q
        .from('users as u')
        .leftJoin('team_members as tm', 'tm.user_id', 'u.id')
        .leftJoin('teams as t', 't.id', 'tm.team_id')
        .where('u.email', owner)
        .select(db.raw(`'user' as kind`), 't.id', 't.slug', 't.name'),
    );
  // A slug never holds '@' and an email always does, so at most one kind matches.
  const kind = rows[0]?.kind ?? 'unknown';
  const teams = rows
    .filter((row): row is TeamRef & { kind: 'team' | 'user' } => row.id != null)
    .map(({ id, slug, name }) => ({ id, slug, name }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { kind, teams };
}

/** Per team, how many entities its owners (slug and members' emails) own; every team, most first. */
export async function entitiesPerTeam(db: Knex): Promise<(TeamRef & { entities: number })[]> {
  const owners = db
    .from('teams as t')
    .select('t.id as team_id', 't.slug as owner')
    .unionAll((q) =>
      q.from('team_members as tm').join('users as u', 'u.id', 'tm.user_id').select('tm.team_id', 'u.email as owner'),
    )
    .as('o');
  const rows: (TeamRef & { entities: string })[] = await db
    .from('teams as t')
    .leftJoin(owners, 'o.team_id', 't.id')
    .leftJoin('entities as e', 'e.owner', 'o.owner')
    .groupBy('t.id', 't.slug', 't.name')
    .select('t.id', 't.slug', 't.name', db.raw('count(e.id) as entities'))
    .orderBy([{ column: 'entities', order: 'desc' }, { column: 't.name' }, { column: 't.id' }]);
  return rows.map((row) => ({ ...row, entities: Number(row.entities) }));
}
