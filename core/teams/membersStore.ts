import type { Knex } from 'knex';
import { keysetStatement, type KeysetOrder, type KeysetWindow } from '../paging';
import { statement, type Placeholders } from '../../db/statements';
import type { IdentityProvider } from '../users/types';
import type { TeamMemberRole } from './types';

// A team's members, identity-provider group mappings and roles. Callers check that the team
// exists (and lock it) first; every list is one query.

export interface TeamMember {
  user_id: string;
  name: string;
  email: string;
  role: TeamMemberRole;
}

export interface GroupMapping {
  id: string;
  group_name: string;
  provider: IdentityProvider;
  role: TeamMemberRole;
}

const MAPPING_COLUMNS = ['id', 'group_name', 'provider', 'role'];

/** By name; the email (unique in a tenant) breaks ties. */
const MEMBER_ORDER: KeysetOrder = {
  columns: [
    { column: 'u.name', kind: 'text' },
    { column: 'u.email', kind: 'text' },
  ],
  direction: 'asc',
};

/** The team whose rows a list reads. */
type OfTeam = { teamId: string };

const membersOf = (q: Knex, { teamId }: Placeholders<OfTeam>) =>
  q('team_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.team_id', teamId)
    .select('m.user_id', 'u.name', 'u.email', 'm.role');

const asIs = <T>(row: T) => row;

const allMembers = statement<TeamMember, OfTeam>((q, team) =>
  membersOf(q, team).orderBy(MEMBER_ORDER.columns.map((c) => c.column)),
);

/** Every member: for the team's details. */
export function listMembers(db: Knex, teamId: string): Promise<TeamMember[]> {
  return allMembers.rows(db, { teamId });
}

const memberPage = keysetStatement({ order: MEMBER_ORDER, build: membersOf, toItem: asIs<TeamMember> });

export function listMembersPage(db: Knex, teamId: string, window: KeysetWindow) {
  return memberPage(db, window, { teamId });
}

/** false when the user is already a member. */
export async function addMember(
  db: Knex,
  tenantId: string,
  teamId: string,
  userId: string,
  role: TeamMemberRole,
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

/** A team maps a group of a provider once. */
const MAPPING_ORDER: KeysetOrder = {
  columns: [
    { column: 'group_name', kind: 'text' },
    { column: 'provider', kind: 'text' },
  ],
  direction: 'asc',
};

const mappingsOf = (q: Knex, { teamId }: Placeholders<OfTeam>) =>
  q('team_group_mappings').where({ team_id: teamId }).select(MAPPING_COLUMNS);

const allMappings = statement<GroupMapping, OfTeam>((q, team) =>
  mappingsOf(q, team).orderBy(MAPPING_ORDER.columns.map((c) => c.column)),
);

/** Every mapping: for the team's details. */
export function listMappings(db: Knex, teamId: string): Promise<GroupMapping[]> {
  return allMappings.rows(db, { teamId });
}

const mappingPage = keysetStatement({ order: MAPPING_ORDER, build: mappingsOf, toItem: asIs<GroupMapping> });

export function listMappingsPage(db: Knex, teamId: string, window: KeysetWindow) {
  return mappingPage(db, window, { teamId });
}

/** undefined when the team already maps that group of that provider. */
export async function addMapping(
  db: Knex,
  tenantId: string,
  teamId: string,
  mapping: { group_name: string; provider: IdentityProvider; role: TeamMemberRole },
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
