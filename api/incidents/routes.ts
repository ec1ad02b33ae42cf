import { entityIdOf } from '../../core/catalog/entityStore';
import { notFound } from '../../core/errors';
import { entityOncall, listEntityIncidents } from '../../core/incidents/store';
import { entityRefParams } from '../catalog/schemas';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { incidentsPageSchema, incidentsQuery, ONCALL_MAX, oncallSchema } from './schemas';

// An entity's incidents and on-call, as incident-tool-a syncs bring them; each a 404 when the
// tenant has no such entity.

async function requireEntityId(db: Parameters<typeof entityIdOf>[0], ref: string): Promise<string> {
  const id = await entityIdOf(db, ref);
  if (!id) throw notFound('Entity');
  return id;
}

export const incidentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/incidents',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      "The entity's incidents from incident-tool-a, newest first (by when they opened), all or those of one `status`",
    params: entityRefParams,
    query: incidentsQuery,
    responses: { 200: { description: '`{incidents, next_cursor}`', schema: incidentsPageSchema } },
    handler: async ({ db, params, query }) => {
      const entityId = await requireEntityId(db, params.id);
      const window = shapeDWindow(query);
      const page = shapeDPage(await listEntityIncidents(db, entityId, query.status, window), window);
      return { incidents: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/oncall',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: `Who is on call for the entity, from incident-tool-a: by escalation level, then shift start (at most ${ONCALL_MAX})`,
    params: entityRefParams,
    responses: { 200: { description: '`{oncall}`', schema: oncallSchema } },
    handler: async ({ db, params }) => ({
      oncall: await entityOncall(db, await requireEntityId(db, params.id), ONCALL_MAX),
    }),
  }),
];
