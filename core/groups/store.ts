import type { Knex } from 'knex';
import { uuidOrNullSql } from '../ids';
import { keysetStatement, type KeysetOrder } from '../paging';
import type { IdentityProvider } from '../users/types';

// Group membership belongs to the identity provider. A group is known here when a team maps
// it, a role is mapped to it, or a user's latest sign-in carried it; its members are counted
// from those sign-ins.

interface GroupRow {
  name: string;
  providers: IdentityProvider[];
  roles: string[];
  teams: string[];
  member_count: number;
}

const toGroup = (row: GroupRow) => ({
  name: row.name,
  // Role mappings apply to a group name whatever its provider; a name no team maps has none here.
  provider: row.providers[0] as IdentityProvider | undefined,
  member_count: row.member_count,
  roles: row.roles,
  teams: row.teams,
});

const GROUP_ORDER: KeysetOrder = { columns: [{ column: 'n.group_name', kind: 'text' }], direction: 'asc' };

/** A page of the groups the tenant knows, by name, with their members, roles and mapped teams, in one query. */
export const listGroups = keysetStatement({
  order: GROUP_ORDER,
  build: (q) =>
    q
      .with(
        'names',
        q.raw(`select group_name from team_group_mappings
               union
               select group_name from group_roles
               union
               select unnest(idp_groups) from users`),
      )
      .from('names as n')
      .select(
        'n.group_name as name',
        q.raw(
          `array(select distinct m.provider from team_group_mappings m where m.group_name = n.group_name order by 1) as providers`,
        ),
        q.raw(`array(select coalesce(b.name, g.role) from group_roles g left join role_bundles b on b.id = ${uuidOrNullSql('g.role')}
                     where g.group_name = n.group_name order by 1) as roles`),
        q.raw(`array(select distinct t.slug from team_group_mappings m join teams t on t.id = m.team_id
                     where m.group_name = n.group_name order by 1) as teams`),
        q.raw(`(select count(*) from users u where u.idp_groups @> array[n.group_name])::int as member_count`),
      ),
  toItem: toGroup,
});

/** false when the group already has the role. */
export async function addGroupRole(db: Knex, tenantId: string, groupName: string, key: string): Promise<boolean> {
  const rows = await db('group_roles')
    .insert({ tenant_id: tenantId, group_name: groupName, role: key })
    .onConflict(['tenant_id', 'group_name', 'role'])
    .ignore()
    .returning('role');
  return rows.length > 0;
}

export async function removeGroupRole(db: Knex, groupName: string, key: string): Promise<boolean> {
  return (await db('group_roles').where({ group_name: groupName, role: key }).del()) > 0;
}
