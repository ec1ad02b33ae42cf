import { recentActivity } from '../../core/audit/store';
import { notFound } from '../../core/errors';
import { assignedRoles } from '../../core/roles/store';
import { changeTeam, createTeam, removeTeam } from '../../core/teams/commands';
import { listMappings, listMembers } from '../../core/teams/membersStore';
import { getTeam, getTeamByIdOrSlug, listAllTeams, listTeamsPage } from '../../core/teams/store';
import { parseOffsetCursor, shapeAPage, shapeAQuery, shapeAWindow } from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import { dropTeamsCache } from './cache';
import {
  createTeamSchema,
  teamDetailsSchema,
  teamIdParams,
  teamListSchema,
  teamRefParams,
  teamSchema,
  updateTeamSchema,
} from './schemas';
import { teamSubresourceRoutes } from './subresourceRoutes';

const TEAM_AUDIT_ENTRIES = 50;

export const teamRoutes = [
  defineRoute({
    method: 'GET',
    path: '/teams',
    tag: 'Teams',
    access: 'authenticated',
    summary:
      'List teams with member counts. Without limit or cursor: every team. Cached per tenant for up to 3 minutes; any team write drops it',
    query: {
      type: 'object',
      // No default limit: one description of /teams returns every team.
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', maxLength: 512 } },
      additionalProperties: false,
    },
    responses: { 200: { description: '`{teams, page}`', schema: teamListSchema } },
    handler: async ({ db, auth, deps, query }) => {
      const all = await deps.teamsCache.getOrLoad(auth.tenantId, () => listAllTeams(db));
      if (query.limit === undefined && !query.cursor) {
        return { teams: all, page: { limit: all.length, total: all.length, nextCursor: null, prevCursor: null } };
      }
      const window = { limit: query.limit ?? 20, offset: parseOffsetCursor(query.cursor) };
      return {
        teams: all.slice(window.offset, window.offset + window.limit),
        page: shapeAPage(window, all.length),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/teams/{id_or_slug}',
    tag: 'Teams',
    // Members carry emails (personal data): the same scope as the user directory.
    access: 'catalog:read',
    summary:
      'A team by id or slug, with its members, group mappings, roles and, for admin:read holders, its recent audit entries',
    params: teamRefParams,
    responses: {
      200: {
        description: '`{team, members, group_mappings, roles, audit_log}` (`audit_log` only with admin:read)',
        schema: teamDetailsSchema,
      },
    },
    handler: async ({ db, auth, params }) => {
      const team = await getTeamByIdOrSlug(db, params.id_or_slug);
      if (!team) throw notFound('Team');
      // Sequential: the request's transaction is one connection, which runs one query at a time.
      const members = await listMembers(db, team.id);
      const group_mappings = await listMappings(db, team.id);
      const roles = await assignedRoles(db, 'team_roles', { team_id: team.id });
      if (!auth.permissions.has('admin:read')) return { team, members, group_mappings, roles };
      const audit_log = await recentActivity(db, TEAM_AUDIT_ENTRIES, { type: 'team', id: team.id });
      return { team, members, group_mappings, roles, audit_log };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams',
    tag: 'Teams',
    access: 'admin:read',
    summary: 'List teams with member counts (uncached)',
    query: { type: 'object', properties: shapeAQuery(), additionalProperties: false },
    responses: { 200: { description: '`{teams, page}`', schema: teamListSchema } },
    handler: async ({ db, query }) => {
      const window = shapeAWindow(query);
      const { teams, total } = await listTeamsPage(db, window);
      return { teams, page: shapeAPage(window, total) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Create a team; the slug is derived from the name when absent and is unique in the tenant',
    body: createTeamSchema,
    responses: {
      201: {
        description: 'The team',
        schema: teamSchema,
        links: linksTo(
          [
            'GET /admin/teams/{id}',
            'PUT /admin/teams/{id}',
            'DELETE /admin/teams/{id}',
            'GET /admin/teams/{id}/members',
            'POST /admin/teams/{id}/members',
            'GET /admin/teams/{id}/mappings',
            'POST /admin/teams/{id}/mappings',
            'GET /admin/teams/{id}/roles',
            'POST /admin/teams/{id}/roles',
          ],
          { id: '$response.body#/id' },
        ),
      },
    },
    handler: async ({ db, auth, deps, body }) => {
      const team = await createTeam(db, auth, body);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return team;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/admin/teams/{id}',
    tag: 'Teams',
    access: 'admin:read',
    summary: 'A team',
    params: teamIdParams,
    responses: { 200: { description: 'The team', schema: teamSchema } },
    handler: async ({ db, params }) => {
      const team = await getTeam(db, params.id);
      if (!team) throw notFound('Team');
      return team;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/teams/{id}',
    tag: 'Teams',
    access: 'admin:write',
    summary:
      'Update a team (partial). A new parent must be a team of this tenant and must not make the team its own ancestor',
    params: teamIdParams,
    body: updateTeamSchema,
    responses: { 200: { description: 'The team', schema: teamSchema } },
    handler: async ({ db, auth, deps, params, body }) => {
      const team = await changeTeam(db, auth, params.id, body);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return team;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}',
    changesAccess: true,
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Delete a team with its members, mappings and roles; child teams lose their parent',
    params: teamIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, deps, params }) => {
      await removeTeam(db, auth, params.id);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
    },
  }),
  ...teamSubresourceRoutes,
];
