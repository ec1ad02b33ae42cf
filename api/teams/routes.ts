import type { Knex } from 'knex';
import { recentActivity, RefusedAction } from '../../core/audit/store';
import { conflict, invalid, notFound } from '../../core/errors';
import { shapeAPage, shapeAQuery, shapeAWindow, parseOffsetCursor } from '../http/pagination';
import { defineRoute } from '../http/route';
import { assignedRoles } from '../../core/roles/store';
import { teamChanged, teamWriteRefused } from './changes';
import { listMappings, listMembers } from '../../core/teams/membersStore';
import { teamSubresourceRoutes } from './subresourceRoutes';
import {
  createTeamSchema,
  teamIdParams,
  teamListItemSchema,
  teamRefParams,
  teamSchema,
  updateTeamSchema,
} from './schemas';
import {
  deleteTeam,
  getTeam,
  getTeamByIdOrSlug,
  insertTeam,
  isUsableSlug,
  listAllTeams,
  listTeamsPage,
  lockHierarchy,
  lockTeam,
  slugify,
  updateTeam,
  wouldCreateCycle,
} from '../../core/teams/store';

const TEAM_AUDIT_ENTRIES = 50;

const teamListSchema = {
  type: 'object',
  required: ['teams', 'page'],
  properties: { teams: { type: 'array', items: teamListItemSchema }, page: { type: 'object' } },
} as const;

/**
 * 400 unless `parentId` is a team of this tenant (the foreign key alone would accept any
 * tenant's). Locked so a concurrent delete cannot turn the insert into a foreign-key error.
 */
async function requireParent(db: Knex, parentId: string): Promise<void> {
  if (!(await lockTeam(db, parentId))) {
    throw invalid('parent_id does not refer to a team', [{ field: 'body.parent_id', message: 'no such team' }]);
  }
}

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
      200: { description: '`{team, members, group_mappings, roles, audit_log}` (`audit_log` only with admin:read)' },
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
    responses: { 201: { description: 'The team', schema: teamSchema } },
    handler: async ({ db, auth, deps, body }) => {
      const slug = body.slug ?? slugify(body.name);
      if (!isUsableSlug(slug)) {
        throw invalid(
          body.slug ? 'slug must not look like a uuid' : 'No slug can be derived from this name; send a slug',
          [{ field: 'body.slug', message: 'is not usable' }],
        );
      }
      if (body.parent_id) await requireParent(db, body.parent_id);
      const event = { eventType: 'team.created', action: 'create', metadata: { slug, name: body.name } };
      const team = await insertTeam(db, auth.tenantId, { ...body, slug });
      if (!team)
        throw new RefusedAction(conflict(`A team with slug "${slug}" already exists`), {
          ...event,
          targetType: 'team',
        });
      await teamChanged(deps, db, auth, team.id, event);
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
      if (!(await getTeam(db, params.id))) throw notFound('Team');
      const event = { eventType: 'team.updated', action: 'update', metadata: { fields: Object.keys(body) } };
      if (body.parent_id) {
        if (body.parent_id === params.id)
          throw teamWriteRefused(params.id, event, conflict('A team cannot be its own parent'));
        await lockHierarchy(db, auth.tenantId);
        await requireParent(db, body.parent_id);
        if (await wouldCreateCycle(db, params.id, body.parent_id)) {
          throw teamWriteRefused(
            params.id,
            event,
            conflict('parent_id would make this team its own ancestor (the parent is one of its descendants)'),
          );
        }
      }
      const team = await updateTeam(db, params.id, body);
      if (!team) throw notFound('Team');
      await teamChanged(deps, db, auth, team.id, event);
      return team;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/teams/{id}',
    tag: 'Teams',
    access: 'admin:write',
    summary: 'Delete a team with its members, mappings and roles; child teams lose their parent',
    params: teamIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, deps, params }) => {
      const team = await deleteTeam(db, params.id);
      if (!team) throw notFound('Team');
      await teamChanged(deps, db, auth, team.id, {
        eventType: 'team.deleted',
        action: 'delete',
        metadata: { slug: team.slug, name: team.name },
      });
    },
  }),
  ...teamSubresourceRoutes,
];
