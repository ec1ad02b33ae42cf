import { ApiError, conflict, notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { rolesResponseSchema, roleViewSchema } from '../roles/schemas';
import { assignedRoles, resolveRole } from '../../core/roles/store';
import { requireTeam, teamChanged, teamWriteRefused } from './changes';
import {
  addMapping,
  addMember,
  addTeamRole,
  findUser,
  listMappings,
  listMembers,
  removeMapping,
  removeMember,
  removeTeamRole,
} from '../../core/teams/membersStore';
import {
  addMappingSchema,
  addMemberSchema,
  addTeamRoleSchema,
  groupMappingSchema,
  mappingParams,
  memberParams,
  teamIdParams,
  teamMemberSchema,
  teamRoleParams,
} from './schemas';

// /admin/teams/{id}/members, /mappings and /roles. Each write locks the team, changes one
// row, drops the tenant's /teams cache and audits against the team.

export const teamSubresourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/members',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's members",
    params: teamIdParams,
    responses: {
      200: {
        description: '`{members}`',
        schema: { type: 'object', properties: { members: { type: 'array', items: teamMemberSchema } } },
      },
    },
    handler: async ({ db, params }) => {
      await requireTeam(db, params.id);
      return { members: await listMembers(db, params.id) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/members',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Add a user to a team (409 when already a member)',
    params: teamIdParams,
    body: addMemberSchema,
    responses: { 201: { description: 'The member', schema: teamMemberSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      await requireTeam(db, params.id);
      const user = await findUser(db, body.user_id);
      if (!user) throw notFound('User');
      const event = {
        eventType: 'team.member_added',
        action: 'add_member',
        metadata: { user_id: user.id, email: user.email, role: body.role },
      };
      if (!(await addMember(db, auth.tenantId, params.id, user.id, body.role))) {
        throw teamWriteRefused(params.id, event, conflict('The user is already a member of this team'));
      }
      await teamChanged(deps, db, auth, params.id, event);
      return { user_id: user.id, name: user.name, email: user.email, role: body.role };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/members/{memberId}',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Remove a user (memberId is the user id) from a team',
    params: memberParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await requireTeam(db, params.id);
      if (!(await removeMember(db, params.id, params.memberId))) throw notFound('Team member');
      await teamChanged(deps, db, auth, params.id, {
        eventType: 'team.member_removed',
        action: 'remove_member',
        metadata: { user_id: params.memberId },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/mappings',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's identity-provider group mappings (members of a mapped group count as team members)",
    params: teamIdParams,
    responses: {
      200: {
        description: '`{mappings}`',
        schema: { type: 'object', properties: { mappings: { type: 'array', items: groupMappingSchema } } },
      },
    },
    handler: async ({ db, params }) => {
      await requireTeam(db, params.id);
      return { mappings: await listMappings(db, params.id) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/mappings',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Map an identity-provider group to a team (role defaults to member; 409 when already mapped)',
    params: teamIdParams,
    body: addMappingSchema,
    responses: { 201: { description: 'The mapping', schema: groupMappingSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      await requireTeam(db, params.id);
      const requested = { ...body, role: body.role ?? 'member' };
      const mapping = await addMapping(db, auth.tenantId, params.id, requested);
      if (!mapping) {
        throw teamWriteRefused(
          params.id,
          { eventType: 'team.mapping_added', action: 'add_mapping', metadata: requested },
          conflict(`Group "${body.group_name}" of ${body.provider} is already mapped to this team`),
        );
      }
      await teamChanged(deps, db, auth, params.id, {
        eventType: 'team.mapping_added',
        action: 'add_mapping',
        metadata: { ...mapping },
      });
      return mapping;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/mappings/{mappingId}',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Remove a group mapping from a team',
    params: mappingParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await requireTeam(db, params.id);
      const mapping = await removeMapping(db, params.id, params.mappingId);
      if (!mapping) throw notFound('Group mapping');
      await teamChanged(deps, db, auth, params.id, {
        eventType: 'team.mapping_removed',
        action: 'remove_mapping',
        metadata: { ...mapping },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/roles',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's roles (held by its members and by members of its mapped groups)",
    params: teamIdParams,
    responses: { 200: { description: '`{roles}`', schema: rolesResponseSchema } },
    handler: async ({ db, params }) => {
      await requireTeam(db, params.id);
      return { roles: await assignedRoles(db, 'team_roles', { team_id: params.id }) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/roles',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Give a team a role (role_id: a built-in name, role bundle id or name; 409 when it has it)',
    params: teamIdParams,
    body: addTeamRoleSchema,
    responses: { 201: { description: 'The role', schema: roleViewSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      await requireTeam(db, params.id);
      const role = await resolveRole(db, body.role_id);
      if (!role) throw notFound('Role');
      const event = {
        eventType: 'team.role_assigned',
        action: 'assign_role',
        metadata: { role: role.id, role_name: role.name },
      };
      if (!(await addTeamRole(db, auth.tenantId, params.id, role.id))) {
        throw teamWriteRefused(params.id, event, conflict(`The team already has role "${role.name}"`));
      }
      await teamChanged(deps, db, auth, params.id, event);
      return role;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/roles/{roleId}',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Take a role from a team (roleId: a built-in name, role bundle id or name)',
    params: teamRoleParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await requireTeam(db, params.id);
      const role = await resolveRole(db, params.roleId);
      if (!role) throw notFound('Role');
      if (!(await removeTeamRole(db, params.id, role.id)))
        throw new ApiError('NOT_FOUND', `The team does not have role "${role.name}"`);
      await teamChanged(deps, db, auth, params.id, {
        eventType: 'team.role_unassigned',
        action: 'unassign_role',
        metadata: { role: role.id, role_name: role.name },
      });
    },
  }),
];
