import type { Knex } from 'knex';
import { entityIdOf } from '../../core/catalog/entityStore';
import { invalid, notFound } from '../../core/errors';
import { doraReport } from '../../core/insights/doraReport';
import type { DoraScope } from '../../core/insights/doraStore';
import { getTeamByIdOrSlug } from '../../core/teams/store';
import { defineRoute } from '../http/route';
import { doraQuery, doraSchema } from './doraSchemas';

// DORA metrics (docs/insights.md, DORA metrics) of the tenant, an entity or a team's entities.

async function scopeOf(db: Knex, query: { entity_id?: string; team_id?: string }) {
  if (query.entity_id !== undefined && query.team_id !== undefined)
    throw invalid('Give entity_id or team_id, not both', [
      { field: 'query.team_id', message: 'cannot be combined with entity_id' },
    ]);
  if (query.entity_id !== undefined) {
    const entityId = await entityIdOf(db, query.entity_id);
    if (!entityId) throw notFound('Entity');
    return { scope: { kind: 'entity', entityId } satisfies DoraScope, id: entityId };
  }
  if (query.team_id !== undefined) {
    const team = await getTeamByIdOrSlug(db, query.team_id);
    if (!team) throw notFound('Team');
    return { scope: { kind: 'team', team: team.id, column: 'id' } satisfies DoraScope, id: team.id };
  }
  return { scope: { kind: 'tenant' } satisfies DoraScope, id: null };
}

export const doraRoutes = [
  defineRoute({
    method: 'GET',
    path: '/insights/dora',
    tag: 'Insights',
    access: 'catalog:read',
    summary:
      'DORA metrics over a window (7d, 30d, 90d): deployment frequency, lead time for changes, change failure rate and time to restore service, each with its performance band, or null with the reason; for the tenant, an entity (`entity_id`) or a team’s entities (`team_id`)',
    query: doraQuery,
    responses: {
      200: { description: 'The four metrics', schema: doraSchema },
      400: { description: 'A query value out of range, or both entity_id and team_id' },
      404: { description: 'entity_id or team_id names nothing of the tenant' },
    },
    handler: async ({ db, deps, query }) => {
      const { scope, id } = await scopeOf(db, query);
      const report = await doraReport(db, scope, query.window, deps.config.dora.failureWindowMs);
      return { scope: { kind: scope.kind, id }, ...report };
    },
  }),
];
