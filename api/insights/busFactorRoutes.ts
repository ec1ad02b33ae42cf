import { entityIdOf } from '../../core/catalog/entityStore';
import { invalid, notFound } from '../../core/errors';
import { entityBusFactor, repositoryBusFactor, type BusFactorReport } from '../../core/insights/busFactorCommands';
import { DEFAULT_BUS_FACTOR_WINDOW } from '../../core/insights/busFactorRules';
import { listEntityBusFactors } from '../../core/insights/busFactorStore';
import { toIso } from '../../core/timestamps';
import { defineRoute } from '../http/route';
import { busFactorQuery, busFactorResponseSchema } from './busFactorSchemas';

// The bus factor (docs/insights.md, Bus factor): of one entity or repository over a window,
// computed from the kept commits; without ids, the tenant's entities by their kept figure.

const reportView = ({ since, ...report }: BusFactorReport) => ({ ...report, since: toIso(since) });

export const busFactorRoutes = [
  defineRoute({
    method: 'GET',
    path: '/insights/bus-factor',
    tag: 'Insights',
    access: 'catalog:read',
    summary:
      'The bus factor of an entity (`entity_id`: its linked repositories together) or a repository (`repository_id`) over `window`: the fewest contributors who authored more than half of the lines changed, with the contributors by share; `bus_factor` null with `reason` when there is nothing to count. Without ids: the entities by their kept bus factor (default window), lowest first',
    query: busFactorQuery,
    responses: {
      200: { description: 'The report, or `{entities, window, next_offset}`', schema: busFactorResponseSchema },
      400: { description: 'Both entity_id and repository_id, or a bad query (INVALID_REQUEST)' },
      404: { description: 'The tenant has no such entity or repository' },
    },
    handler: async ({ db, query }) => {
      const { entity_id, repository_id, window, limit, offset } = query;
      if (entity_id !== undefined && repository_id !== undefined)
        throw invalid('Give entity_id or repository_id, not both', [
          { field: 'query.repository_id', message: 'is not allowed with entity_id' },
        ]);
      if (entity_id !== undefined) {
        const id = await entityIdOf(db, entity_id);
        const report = id && (await entityBusFactor(db, id, window));
        if (!report) throw notFound('Entity');
        return reportView(report);
      }
      if (repository_id !== undefined) {
        const report = await repositoryBusFactor(db, repository_id, window);
        if (!report) throw notFound('Repository');
        return { repository_id, ...reportView(report) };
      }
      const rows = await listEntityBusFactors(db, { limit: limit + 1, offset });
      return {
        window: DEFAULT_BUS_FACTOR_WINDOW,
        entities: rows.slice(0, limit).map((row) => ({ ...row, computed_at: toIso(row.computed_at) })),
        next_offset: rows.length > limit ? offset + limit : null,
      };
    },
  }),
];
