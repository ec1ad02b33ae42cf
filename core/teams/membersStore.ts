import type { Knex } from 'knex';

// A team's members, identity-provider group mappings and roles. Callers check that the team
// exists (and lock it) first; every list is one query.

export interface TeamMember {
  user_id: string;
  name: string;
  email: string;
  role: string;
}

export interface GroupMapping {
  id: string;
  group_name: string;
  provider: string;
  role: string;
}

const MAPPING_COLUMNS = ['id', 'group_name', 'provider', 'role'];

export function listMembers(db: Knex, teamId: string): Promise<TeamMember[]> {
  return db('team_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.team_id', teamId)
    .orderBy([{ column: 'u.name' }, { column: 'u.email' }])
    .select('m.user_id', 'u.name', 'u.email', 'm.role');
}

export async function findUser(
  db: Knex,
  userId: string,
): Promise<{ id: string; name: string; email: string } | undefined> {
  return db('users').where({ id: userId }).first('id', 'name', 'email');
}

/** false when the user is already a member. */
export async function addMember(
  db: Knex,
  tenantId: string,
  teamId: string,
  userId: string,
  role: string,
): Promise<boolean> {
  const rows = await db('team_members')
    .insert({ tenant_id: tenantId, team_id: teamId, user_id: userId, role })
    .onConflict(['team_id', 'user_id'])
    .ignore()
    .returning('user_id');
  return rows.length > 0;
}

export async function removeMember(db: Knex, teamId: string, userId: string): Promise<boolean> {
  return (await db('team_members').where({ team_id: teamId, user_id: userId }).del()) > 0;
}

export function listMappings(db: Knex, teamId: string): Promise<GroupMapping[]> {
  return db('team_group_mappings')
    .where({ team_id: teamId })
    .orderBy([{ column: 'group_name' }, { column: 'provider' }])
    .select(MAPPING_COLUMNS);
}

/** undefined when the team already maps that group of that provider. */
export async function addMapping(
  db: Knex,
  tenantId: string,
  teamId: string,
  mapping: { group_name: string; provider: string; role: string },
): Promise<GroupMapping | undefined> {
  const [row] = await db('team_group_mappings')
    .insert({ tenant_id: tenantId, team_id: teamId, ...mapping })
    .onConflict(['team_id', 'group_name', 'provider'])
    .ignore()
    .returning(MAPPING_COLUMNS);
  return row;
}

export async function removeMapping(db: Knex, teamId: string, mappingId: string): Promise<GroupMapping | undefined> {
  const [row] = await db('team_group_mappings')
    .where({ team_id: teamId, id: mappingId })
    .del()
    .returning(MAPPING_COLUMNS);
  return row;
}

/** false when the team already holds the role. */
export async function addTeamRole(db: Knex, tenantId: string, teamId: string, key: string): Promise<boolean> {
  const rows = await db('team_roles')
    .insert({ tenant_id: tenantId, team_id: teamId, role: key })
    .onConflict(['team_id', 'role'])
    .ignore()
    .returning('role');
  return rows.length > 0;
}

export async function removeTeamRole(db: Knex, teamId: string, key: string): Promise<boolean> {
  return (await db('team_roles').where({ team_id: teamId, role: key }).del()) > 0;
}
