import type { Knex } from 'knex';
import { recordAudit, RefusedAction } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { ApiError, conflict, invalid, notFound } from '../errors';
import { resolveRole } from '../roles/store';
import { findUser } from '../users/store';
import type { IdentityProvider } from '../users/types';
import {
  addMapping,
  addMember,
  addTeamRole,
  removeMapping,
  removeMember,
  removeTeamRole,
  type GroupMapping,
  type TeamMember,
} from './membersStore';
import {
  deleteTeam,
  getTeam,
  insertTeam,
  isUsableSlug,
  lockHierarchy,
  lockTeam,
  updateTeam,
  wouldCreateCycle,
  type Team,
} from './store';
import { slugify } from '../ids';
import type { TeamMemberRole } from './types';

// Team writes: each checks, writes and audits against the team in the caller's transaction.
// The API's cached team list is the caller's to drop after any of them (api/teams/cache.ts).

type TeamEvent = { eventType: string; action: string; metadata?: Record<string, unknown> };

const audited = (db: Knex, auth: CallerPrincipal, teamId: string, event: TeamEvent) =>
  recordAudit(db, auth, { ...event, targetType: 'team', targetId: teamId });

/** A team write refused by a rule: the caller gets `error`, the team's log a failure entry. */
const refused = (teamId: string | undefined, event: TeamEvent, error: ApiError) =>
  new RefusedAction(error, { ...event, targetType: 'team', targetId: teamId });

/** 404 unless the team exists in the caller's tenant; held until commit so it cannot vanish. */
export async function requireTeam(db: Knex, teamId: string): Promise<void> {
  if (!(await lockTeam(db, teamId))) throw notFound('Team');
}

/**
 * 400 unless `parentId` is a team of this tenant (the foreign key alone would accept any
 * tenant's). Locked so a concurrent delete cannot turn the insert into a foreign-key error.
 */
async function requireParent(db: Knex, parentId: string): Promise<void> {
  if (!(await lockTeam(db, parentId))) {
    throw invalid('parent_id does not refer to a team', [{ field: 'body.parent_id', message: 'no such team' }]);
  }
}

export interface NewTeam {
  name: string;
  /** Derived from the name when absent. */
  slug?: string;
  description: string;
  parent_id: string | null;
  metadata: Record<string, unknown>;
}

export async function createTeam(db: Knex, auth: CallerPrincipal, team: NewTeam): Promise<Team> {
  const slug = team.slug ?? slugify(team.name);
  if (!isUsableSlug(slug)) {
    const why = team.slug
      ? 'slug must not look like a uuid or be org-chart'
      : 'No usable slug comes from this name; send a slug';
    throw invalid(why, [{ field: 'body.slug', message: 'is not usable' }]);
  }
  if (team.parent_id) await requireParent(db, team.parent_id);
  const event = { eventType: 'team.created', action: 'create', metadata: { slug, name: team.name } };
  const created = await insertTeam(db, auth.tenantId, { ...team, slug });
  if (!created) throw refused(undefined, event, conflict(`A team with slug "${slug}" already exists`));
  await audited(db, auth, created.id, event);
  return created;
}

/** A partial update. A new parent must be a team of this tenant and must not make a cycle. */
export async function changeTeam(
  db: Knex,
  auth: CallerPrincipal,
  id: string,
  changes: { name?: string; description?: string; parent_id?: string | null; metadata?: Record<string, unknown> },
): Promise<Team> {
  if (!(await getTeam(db, id))) throw notFound('Team');
  const event = { eventType: 'team.updated', action: 'update', metadata: { fields: Object.keys(changes) } };
  if (changes.parent_id) {
    if (changes.parent_id === id) throw refused(id, event, conflict('A team cannot be its own parent'));
    await lockHierarchy(db, auth.tenantId);
    await requireParent(db, changes.parent_id);
    if (await wouldCreateCycle(db, id, changes.parent_id)) {
      throw refused(
        id,
        event,
        conflict('parent_id would make this team its own ancestor (the parent is one of its descendants)'),
      );
    }
  }
  const team = await updateTeam(db, id, changes);
  if (!team) throw notFound('Team');
  await audited(db, auth, team.id, event);
  return team;
}

export async function removeTeam(db: Knex, auth: CallerPrincipal, id: string): Promise<void> {
  const team = await deleteTeam(db, id);
  if (!team) throw notFound('Team');
  await audited(db, auth, team.id, {
    eventType: 'team.deleted',
    action: 'delete',
    metadata: { slug: team.slug, name: team.name },
  });
}

export async function addTeamMember(
  db: Knex,
  auth: CallerPrincipal,
  teamId: string,
  userId: string,
  role: TeamMemberRole,
): Promise<TeamMember> {
  await requireTeam(db, teamId);
  const user = await findUser(db, userId);
  if (!user) throw notFound('User');
  const event = {
    eventType: 'team.member_added',
    action: 'add_member',
    metadata: { user_id: user.id, email: user.email, role },
  };
  if (!(await addMember(db, auth.tenantId, teamId, user.id, role))) {
    throw refused(teamId, event, conflict('The user is already a member of this team'));
  }
  await audited(db, auth, teamId, event);
  return { user_id: user.id, name: user.name, email: user.email, role };
}

export async function removeTeamMember(db: Knex, auth: CallerPrincipal, teamId: string, userId: string) {
  await requireTeam(db, teamId);
  if (!(await removeMember(db, teamId, userId))) throw notFound('Team member');
  await audited(db, auth, teamId, {
    eventType: 'team.member_removed',
    action: 'remove_member',
    metadata: { user_id: userId },
  });
}

export async function addTeamMapping(
  db: Knex,
  auth: CallerPrincipal,
  teamId: string,
  requested: { group_name: string; provider: IdentityProvider; role: TeamMemberRole },
): Promise<GroupMapping> {
  await requireTeam(db, teamId);
  const event = { eventType: 'team.mapping_added', action: 'add_mapping' };
  const mapping = await addMapping(db, auth.tenantId, teamId, requested);
  if (!mapping) {
    throw refused(
      teamId,
      { ...event, metadata: requested },
      conflict(`Group "${requested.group_name}" of ${requested.provider} is already mapped to this team`),
    );
  }
  await audited(db, auth, teamId, { ...event, metadata: { ...mapping } });
  return mapping;
}

export async function removeTeamMapping(db: Knex, auth: CallerPrincipal, teamId: string, mappingId: string) {
  await requireTeam(db, teamId);
  const mapping = await removeMapping(db, teamId, mappingId);
  if (!mapping) throw notFound('Group mapping');
  await audited(db, auth, teamId, {
    eventType: 'team.mapping_removed',
    action: 'remove_mapping',
    metadata: { ...mapping },
  });
}

/** Gives a team a role (a built-in name, bundle id or name); a 409, audited, when it has it. */
export async function addRoleToTeam(db: Knex, auth: CallerPrincipal, teamId: string, ref: string) {
  await requireTeam(db, teamId);
  const role = await resolveRole(db, ref);
  if (!role) throw notFound('Role');
  const event = {
    eventType: 'team.role_assigned',
    action: 'assign_role',
    metadata: { role: role.id, role_name: role.name },
  };
  if (!(await addTeamRole(db, auth.tenantId, teamId, role.id))) {
    throw refused(teamId, event, conflict(`The team already has role "${role.name}"`));
  }
  await audited(db, auth, teamId, event);
  return role;
}

export async function removeRoleFromTeam(db: Knex, auth: CallerPrincipal, teamId: string, ref: string) {
  await requireTeam(db, teamId);
  const role = await resolveRole(db, ref);
  if (!role) throw notFound('Role');
  if (!(await removeTeamRole(db, teamId, role.id))) {
    throw new ApiError('NOT_FOUND', `The team does not have role "${role.name}"`);
  }
  await audited(db, auth, teamId, {
    eventType: 'team.role_unassigned',
    action: 'unassign_role',
    metadata: { role: role.id, role_name: role.name },
  });
}
