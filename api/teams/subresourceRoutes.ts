import {
  addRoleToTeam,
  addTeamMapping,
  addTeamMember,
  removeRoleFromTeam,
  removeTeamMapping,
  removeTeamMember,
  requireTeam,
} from '../../core/teams/commands';
import { listMappingsPage, listMembersPage } from '../../core/teams/membersStore';
import { assignedRolesPage } from '../../core/roles/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import { keysetQuery, rolesPageSchema, roleViewSchema } from '../roles/schemas';
import { dropTeamsCache } from './cache';
import {
  addMappingSchema,
  addMemberSchema,
  addTeamRoleSchema,
  groupMappingSchema,
  mappingParams,
  mappingsPageSchema,
  memberParams,
  membersPageSchema,
  teamIdParams,
  teamMemberSchema,
  teamRoleParams,
} from './schemas';

// /admin/teams/{id}/members, /mappings and /roles. Each write (core/teams/commands.ts) locks
// the team, changes one row and audits against the team; the route then drops the tenant's
// /teams cache.

export const teamSubresourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/members',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's members, by name",
    params: teamIdParams,
    query: keysetQuery,
    responses: { 200: { description: '`{members, next_cursor}`', schema: membersPageSchema } },
    handler: async ({ db, params, query }) => {
      await requireTeam(db, params.id);
      const window = shapeDWindow(query);
      const page = shapeDPage(await listMembersPage(db, params.id, window), window);
      return { members: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/members',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Add a user to a team (409 when already a member)',
    params: teamIdParams,
    body: addMemberSchema,
    responses: {
      201: {
        description: 'The member',
        schema: teamMemberSchema,
        links: linksTo(['DELETE /admin/teams/{id}/members/{memberId}'], {
          id: '$request.path.id',
          memberId: '$response.body#/user_id',
        }),
      },
    },
    handler: async ({ db, auth, deps, params, body }) => {
      const member = await addTeamMember(db, auth, params.id, body.user_id, body.role);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return member;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/members/{memberId}',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Remove a user (memberId is the user id) from a team',
    params: memberParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await removeTeamMember(db, auth, params.id, params.memberId);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/mappings',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's identity-provider group mappings (members of a mapped group count as team members)",
    params: teamIdParams,
    query: keysetQuery,
    responses: { 200: { description: '`{mappings, next_cursor}`', schema: mappingsPageSchema } },
    handler: async ({ db, params, query }) => {
      await requireTeam(db, params.id);
      const window = shapeDWindow(query);
      const page = shapeDPage(await listMappingsPage(db, params.id, window), window);
      return { mappings: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/mappings',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Map an identity-provider group to a team (role defaults to member; 409 when already mapped)',
    params: teamIdParams,
    body: addMappingSchema,
    responses: { 201: { description: 'The mapping', schema: groupMappingSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      const mapping = await addTeamMapping(db, auth, params.id, body);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return mapping;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/mappings/{mappingId}',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Remove a group mapping from a team',
    params: mappingParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await removeTeamMapping(db, auth, params.id, params.mappingId);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}/roles',
    tag: 'Teams',
    access: 'admin:read',
    summary: "A team's roles (held by its members and by members of its mapped groups), in the order given",
    params: teamIdParams,
    query: keysetQuery,
    responses: { 200: { description: '`{roles, next_cursor}`', schema: rolesPageSchema } },
    handler: async ({ db, params, query }) => {
      await requireTeam(db, params.id);
      const window = shapeDWindow(query);
      const page = shapeDPage(await assignedRolesPage(db, 'team_roles', { team_id: params.id }, window), window);
      return { roles: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/{id}/roles',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Give a team a role (role_id: a built-in name, role bundle id or name; 409 when it has it)',
    params: teamIdParams,
    body: addTeamRoleSchema,
    responses: { 201: { description: 'The role', schema: roleViewSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      const role = await addRoleToTeam(db, auth, params.id, body.role_id);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return role;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}/roles/{roleId}',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Take a role from a team (roleId: a built-in name, role bundle id or name)',
    params: teamRoleParams,
    responses: { 204: { description: 'Removed' } },
    handler: async ({ db, auth, deps, params }) => {
      await removeRoleFromTeam(db, auth, params.id, params.roleId);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
    },
  }),
];
