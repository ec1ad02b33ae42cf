import type { Knex } from 'knex';
import { uuidOrNullSql } from '../ids';
import type { OffsetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';

interface UserRow {
  id: string;
  email: string;
  name: string;
  picture: string | null;
  last_login: Date | null;
  created_at: Date;
}

const USER_COLUMNS = ['u.id', 'u.email', 'u.name', 'u.picture', 'u.last_login', 'u.created_at'];

export const toUser = (row: UserRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  picture: row.picture,
  last_login: toIsoOrNull(row.last_login),
  created_at: toIso(row.created_at),
});

/**
 * A user's team slugs, as one SQL expression: the teams they are a member of and the teams an
 * identity-provider group of theirs is mapped to (which is also how their roles are counted).
 * /me, /users/{id} and /admin/users all list teams with it.
 */
function teamSlugs(
  db: Knex,
  userId: Knex.Ref<string, object> | string,
  groups: Knex.Ref<string, object> | string[],
): Knex.Raw {
  return db.raw(
    `array(select t.slug from teams t
            where exists (select 1 from team_members m where m.team_id = t.id and m.user_id = ?)
               or exists (select 1 from team_group_mappings g where g.team_id = t.id and g.group_name = any(?::text[]))
            order by t.slug)`,
    [userId, groups],
  );
}

/** A LIKE pattern matching `text` literally anywhere (%, _ and \ lose their meaning). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function matching(db: Knex, search: string | undefined) {
  return db('users as u').modify((q) => {
    if (!search) return;
    const pattern = containsPattern(search);
    q.where((w) => w.whereILike('u.email', pattern).orWhereILike('u.name', pattern));
  });
}

async function countMatching(db: Knex, search: string | undefined): Promise<number> {
  const [{ count }] = await matching(db, search).count<{ count: string }[]>('* as count');
  return Number(count);
}

/** A page of users ordered by email (unique per tenant, so pages are stable), and the total. */
export async function listUsers(db: Knex, window: OffsetWindow, search?: string) {
  const rows: UserRow[] = await matching(db, search)
    .orderBy('u.email')
    .limit(window.limit)
    .offset(window.offset)
    .select(USER_COLUMNS);
  return { users: rows.map(toUser), total: await countMatching(db, search) };
}

/** The admin listing adds each user's direct roles and teams, in the same query. */
export async function listUsersForAdmin(db: Knex, window: OffsetWindow, search?: string) {
  const rows: (UserRow & { roles: string[]; teams: string[] })[] = await matching(db, search)
    .orderBy('u.email')
    .limit(window.limit)
    .offset(window.offset)
    .select(USER_COLUMNS)
    .select(
      db.raw(`array(select coalesce(b.name, r.role) from user_roles r left join role_bundles b on b.id = ${uuidOrNullSql('r.role')}
                     where r.user_id = u.id order by 1) as roles`),
      db.raw('? as teams', [teamSlugs(db, db.ref('u.id'), db.ref('u.idp_groups'))]),
    );
  return {
    items: rows.map((row) => ({ ...toUser(row), roles: row.roles, teams: row.teams })),
    total: await countMatching(db, search),
  };
}

/** A user, with their identity-provider groups as of their latest sign-in and their teams. */
export async function getUser(db: Knex, id: string) {
  const row: (UserRow & { idp_groups: string[]; teams: string[] }) | undefined = await db('users as u')
    .where('u.id', id)
    .first([
      ...USER_COLUMNS,
      'u.idp_groups',
      db.raw('? as teams', [teamSlugs(db, db.ref('u.id'), db.ref('u.idp_groups'))]),
    ]);
  return row && { user: toUser(row), groups: row.idp_groups, teams: row.teams };
}

/** The caller's profile for /me, with their teams as reached with `groups` (the token's). */
export function getProfile(
  db: Knex,
  userId: string,
  groups: string[],
): Promise<{ id: string; email: string; name: string; picture: string | null; teams: string[] }> {
  return db('users as u')
    .where('u.id', userId)
    .first('u.id', 'u.email', 'u.name', 'u.picture', db.raw('? as teams', [teamSlugs(db, db.ref('u.id'), groups)]));
}

/** A user's name and email; undefined when no such user is in the tenant. */
export function findUser(db: Knex, userId: string): Promise<{ id: string; name: string; email: string } | undefined> {
  return db('users').where({ id: userId }).first('id', 'name', 'email');
}
