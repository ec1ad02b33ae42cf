import type { Knex } from 'knex';
import { uuidOrNullSql } from '../ids';
import type { OffsetWindow } from '../paging';
import { statement, type Placeholders } from '../../db/statements';
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
  q: Knex,
  userId: Knex.Ref<string, object> | string,
  groups: Knex.Ref<string, object> | string[],
): Knex.Raw {
  return q.raw(
    `array(select t.slug from teams t
            where exists (select 1 from team_members m where m.team_id = t.id and m.user_id = ?)
               or exists (select 1 from team_group_mappings g where g.team_id = t.id and g.group_name = any(?::text[]))
            order by t.slug)`,
    [userId, groups],
  );
}

/** A LIKE pattern matching `text` literally anywhere (%, _ and \ lose their meaning). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The users listed: all, or those a search matches (its pattern bound only then). */
type Filter = 'all' | 'search';

interface UsersPage extends OffsetWindow {
  pattern?: string;
}

/** The values and shape of a listing, from its search. */
const pageOf = (window: OffsetWindow, search: string | undefined): [UsersPage, Filter] =>
  search
    ? [{ limit: window.limit, offset: window.offset, pattern: containsPattern(search) }, 'search']
    : [{ limit: window.limit, offset: window.offset }, 'all'];

function matching(q: Knex, values: Placeholders<UsersPage>, filter: Filter) {
  return q('users as u').modify((b) => {
    if (filter === 'all') return;
    b.where((w) => w.whereILike('u.email', values.pattern).orWhereILike('u.name', values.pattern));
  });
}

const userCount = statement<{ count: string }, UsersPage, Filter>((q, values, filter) =>
  matching(q, values, filter).count('* as count'),
);

async function countMatching(db: Knex, values: UsersPage, filter: Filter): Promise<number> {
  const [{ count }] = await userCount.rows(db, values, filter);
  return Number(count);
}

const pageOfMatching = (q: Knex, values: Placeholders<UsersPage>, filter: Filter) =>
  matching(q, values, filter).orderBy('u.email').limit(values.limit).offset(values.offset).select(USER_COLUMNS);

const userPage = statement<UserRow, UsersPage, Filter>(pageOfMatching);

/** A page of users ordered by email (unique per tenant, so pages are stable), and the total. */
export async function listUsers(db: Knex, window: OffsetWindow, search?: string) {
  const [values, filter] = pageOf(window, search);
  const rows = await userPage.rows(db, values, filter);
  return { users: rows.map(toUser), total: await countMatching(db, values, filter) };
}

const adminUserPage = statement<UserRow & { roles: string[]; teams: string[] }, UsersPage, Filter>(
  (q, values, filter) =>
    pageOfMatching(q, values, filter).select(
      q.raw(`array(select coalesce(b.name, r.role) from user_roles r left join role_bundles b on b.id = ${uuidOrNullSql('r.role')}
                     where r.user_id = u.id order by 1) as roles`),
      q.raw('? as teams', [teamSlugs(q, q.ref('u.id'), q.ref('u.idp_groups'))]),
    ),
);

/** The admin listing adds each user's direct roles and teams, in the same query. */
export async function listUsersForAdmin(db: Knex, window: OffsetWindow, search?: string) {
  const [values, filter] = pageOf(window, search);
  const rows = await adminUserPage.rows(db, values, filter);
  return {
    items: rows.map((row) => ({ ...toUser(row), roles: row.roles, teams: row.teams })),
    total: await countMatching(db, values, filter),
  };
}

const userWithTeams = statement<UserRow & { idp_groups: string[]; teams: string[] }, { id: string }>((q, { id }) =>
  q('users as u')
    .where('u.id', id)
    .first([
      ...USER_COLUMNS,
      'u.idp_groups',
      q.raw('? as teams', [teamSlugs(q, q.ref('u.id'), q.ref('u.idp_groups'))]),
    ]),
);

/** A user, with their identity-provider groups as of their latest sign-in and their teams. */
export async function getUser(db: Knex, id: string) {
  const row = await userWithTeams.first(db, { id });
  return row && { user: toUser(row), groups: row.idp_groups, teams: row.teams };
}

interface Profile {
  id: string;
  email: string;
  name: string;
  picture: string | null;
  teams: string[];
}

const profile = statement<Profile, { userId: string; groups: string[] }>((q, { userId, groups }) =>
  q('users as u')
    .where('u.id', userId)
    .first('u.id', 'u.email', 'u.name', 'u.picture', q.raw('? as teams', [teamSlugs(q, q.ref('u.id'), groups)])),
);

/** The caller's profile for /me, with their teams as reached with `groups` (the token's). */
export async function getProfile(db: Knex, userId: string, groups: string[]): Promise<Profile> {
  const [row] = await profile.rows(db, { userId, groups });
  return row;
}

const userById = statement<{ id: string; name: string; email: string }, { id: string }>((q, { id }) =>
  q('users').where({ id }).first('id', 'name', 'email'),
);

/** A user's name and email; undefined when no such user is in the tenant. */
export async function findUser(
  db: Knex,
  userId: string,
): Promise<{ id: string; name: string; email: string } | undefined> {
  return userById.first(db, { id: userId });
}
