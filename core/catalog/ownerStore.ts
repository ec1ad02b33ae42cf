import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';

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

/** The column a team reference names: a uuid is a team's id, anything else its slug (`idOr`). */
export type TeamColumn = 'id' | 'slug';

/** The owners that name a team (its slug or id, as `column` says): its slug and its members' emails. */
export function ownersOfTeamSql(q: Knex, { team }: Placeholders<{ team: string }>, column: TeamColumn) {
  return q
    .from('teams as t')
    .where(`t.${column}`, team)
    .select('t.slug as owner')
    .unionAll((members) =>
      members
        .from('teams as t')
        .join('team_members as tm', 'tm.team_id', 't.id')
        .join('users as u', 'u.id', 'tm.user_id')
        .where(`t.${column}`, team)
        .select('u.email as owner'),
    );
}

const ownerNames = statement<Partial<TeamRef> & { kind: 'team' | 'user' }, { owner: string }>((q, { owner }) =>
  q
    .from('teams as t')
    .where('t.slug', owner)
    .select(q.raw(`'team' as kind`), 't.id', 't.slug', 't.name')
    .unionAll((users) =>
      users
        .from('users as u')
        .leftJoin('team_members as tm', 'tm.user_id', 'u.id')
        .leftJoin('teams as t', 't.id', 'tm.team_id')
        .where('u.email', owner)
        .select(q.raw(`'user' as kind`), 't.id', 't.slug', 't.name'),
    ),
);

/** What an owner names, and the teams it resolves to, in one query. */
export async function resolveOwner(db: Knex, owner: string | null): Promise<{ kind: OwnerKind; teams: TeamRef[] }> {
  if (owner === null) return { kind: 'none', teams: [] };
  const rows = await ownerNames.rows(db, { owner });
  // A slug never holds '@' and an email always does, so at most one kind matches.
  const kind = rows[0]?.kind ?? 'unknown';
  const teams = rows
    .filter((row): row is TeamRef & { kind: 'team' | 'user' } => row.id != null)
    .map(({ id, slug, name }) => ({ id, slug, name }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { kind, teams };
}

/**
 * Who work about an owner's entity goes to: the owning team's slug (a user owner's first team by
 * name), else the owner as the catalog writes it (a user without a team); null without an owner.
 */
export async function owningTeam(db: Knex, owner: string | null): Promise<string | null> {
  return (await resolveOwner(db, owner)).teams[0]?.slug ?? owner;
}

const teamEntityCounts = statement<TeamRef & { entities: string }>((q) => {
  const owners = q
    .from('teams as t')
    .select('t.id as team_id', 't.slug as owner')
    .unionAll((members) =>
      members
        .from('team_members as tm')
        .join('users as u', 'u.id', 'tm.user_id')
        .select('tm.team_id', 'u.email as owner'),
    )
    .as('o');
  return q
    .from('teams as t')
    .leftJoin(owners, 'o.team_id', 't.id')
    .leftJoin('entities as e', 'e.owner', 'o.owner')
    .groupBy('t.id', 't.slug', 't.name')
    .select('t.id', 't.slug', 't.name', q.raw('count(e.id) as entities'))
    .orderBy([{ column: 'entities', order: 'desc' }, { column: 't.name' }, { column: 't.id' }]);
});

/** Per team, how many entities its owners (slug and members' emails) own; every team, most first. */
export async function entitiesPerTeam(db: Knex): Promise<(TeamRef & { entities: number })[]> {
  const rows = await teamEntityCounts.rows(db);
  return rows.map((row) => ({ ...row, entities: Number(row.entities) }));
}
