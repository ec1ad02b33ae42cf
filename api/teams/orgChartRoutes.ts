import { bulkChangeParents } from '../../core/teams/bulkParent';
import { orgChartOrder } from '../../core/teams/hierarchyRules';
import { listAllTeams } from '../../core/teams/store';
import { defineRoute } from '../http/route';
import { dropTeamsCache } from './cache';
import { bulkParentResultSchema, bulkParentSchema, orgChartSchema } from './orgChartSchemas';

// Listed before the team routes: `/teams/org-chart` must not be read as `/teams/{id_or_slug}`.
export const orgChartRoutes = [
  defineRoute({
    method: 'GET',
    path: '/teams/org-chart',
    tag: 'Teams',
    access: 'authenticated',
    summary:
      'The team tree with member counts, depth-first: each team with its depth and child ids. From the cached team list (GET /teams)',
    responses: { 200: { description: '`{teams}`', schema: orgChartSchema } },
    handler: async ({ db, auth, deps }) => {
      const teams = await deps.teamsCache.getOrLoad(auth.tenantId, () => listAllTeams(db));
      return {
        teams: orgChartOrder(teams).map(({ team, depth, children }) => ({
          id: team.id,
          name: team.name,
          slug: team.slug,
          parent_id: team.parent_id,
          depth,
          member_count: team.member_count,
          children,
        })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/teams/bulk-parent',
    tag: 'Teams',
    access: 'admin:write',
    summary:
      'Changes the parents of up to 200 teams in one transaction, each audited; all or none. A cycle anywhere refuses the whole request',
    body: bulkParentSchema,
    responses: {
      200: { description: '`{updated}`', schema: bulkParentResultSchema },
      400: { description: 'The body is invalid, has more than 200 changes, or names a team twice' },
      404: { description: 'A team or parent is not a team of this tenant (the message names them)' },
      409: { description: 'The changes would make a cycle (the message names its teams); nothing changed' },
    },
    handler: async ({ db, auth, body, deps }) => {
      const result = await bulkChangeParents(db, auth, body.changes);
      await dropTeamsCache(deps.teamsCache, db, auth.tenantId);
      return result;
    },
  }),
];
