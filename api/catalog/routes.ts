import { changeEntity, createEntity, findEntity, removeEntity } from '../../core/catalog/entityCommands';
import { countEntities, countZombies, listEntities, listZombies } from '../../core/catalog/entityListStore';
import { selectedFields, tagList } from '../../core/catalog/entityRules';
import { gradeList } from '../../core/scorecards/types';
import { cachedEntityCounts } from './statsRoutes';
import { notFound } from '../../core/errors';
import { aggregateLimitedResponse } from '../http/aggregateReads';
import { readShapeAKeysetPage, shapeAKeysetWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { entityDetailRoutes } from './detailRoutes';
import {
  createEntitySchema,
  entityListQuery,
  entityListSchema,
  entityRefParams,
  entitySchema,
  updateEntitySchema,
  zombieListSchema,
  zombieQuery,
} from './schemas';
import { statsSchema } from './statsSchemas';

// Entities: the list, summary and zombies, and create, read, update, delete. @koa/router runs
// the first route that matches, so the static /entities/... paths come before /entities/{id}.

export const entityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/entities',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'List entities by name, filtered before paging. Shape A with both metadata forms (`page` and `pagination`); cursors are opaque keyset positions, so a deep page costs what the first does; `total` is an exact count over the filter’s index. `fields=` returns only the fields named (and `id`)',
    query: entityListQuery,
    responses: { 200: { description: '`{entities, page, pagination}`', schema: entityListSchema } },
    handler: async ({ db, query }) => {
      const { limit, cursor, fields, tags, grade, bus_factor, ...filters } = query;
      const filter = { ...filters, tags: tagList(tags), grades: gradeList(grade), busFactor: bus_factor };
      const window = shapeAKeysetWindow({ limit, cursor });
      const selected = selectedFields(fields);
      const { items, page, pagination } = await readShapeAKeysetPage(
        window,
        (w) => listEntities(db, filter, selected, w),
        () => countEntities(db, filter),
      );
      return { entities: items, page, pagination };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/summary',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'Counts of entities by type, lifecycle and tier (every value, zeros included; unset as `none`)',
    responses: {
      200: { description: 'The counts (the Stats shape)', schema: statsSchema },
      ...aggregateLimitedResponse,
    },
    transaction: 'on-demand',
    handler: ({ auth, deps, inTenant }) => cachedEntityCounts(deps, auth.tenantId, inTenant),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/zombies',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'Entities without a write for `inactiveDays` (default 90) created at least `minAge` days ago, the longest inactive first. Shape A (limit up to 200), keyset cursors',
    query: zombieQuery,
    responses: { 200: { description: '`{entities, page}`', schema: zombieListSchema } },
    handler: async ({ db, query }) => {
      const { limit, cursor, ...filter } = query;
      const window = shapeAKeysetWindow({ limit, cursor });
      const { items, page } = await readShapeAKeysetPage(
        window,
        (w) => listZombies(db, filter, w),
        () => countZombies(db, filter),
      );
      return { entities: items, page };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/entities',
    tag: 'Catalog',
    access: 'catalog:write',
    summary:
      'Create an entity (`source: api`). service_id is derived from the name when absent; 409 when taken. Relations name targets by service_id or id; an unknown target is a 400',
    body: createEntitySchema,
    responses: {
      201: { description: 'The entity', schema: entitySchema },
      400: {
        description: 'The body is invalid, or the entity_requires_owner policy refuses an entity without an owner',
      },
    },
    handler: async ({ db, auth, body, deps }) =>
      createEntity(db, auth, body, 'api', await deps.policies.read(db, auth.tenantId)),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'An entity by id or service_id',
    params: entityRefParams,
    responses: { 200: { description: 'The entity', schema: entitySchema } },
    handler: async ({ db, params }) => {
      const entity = await findEntity(db, params.id);
      if (!entity) throw notFound('Entity');
      return entity;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/entities/{id}',
    tag: 'Catalog',
    access: 'catalog:write',
    summary:
      'Update an entity (the spec’s EntityUpdate: name, description, owner, lifecycle, tier, tags; null clears). Each changed field is a changelog entry',
    params: entityRefParams,
    body: updateEntitySchema,
    responses: {
      200: { description: 'The entity', schema: entitySchema },
      400: {
        description: 'The body is invalid, or the entity_requires_owner policy refuses an entity left without an owner',
      },
    },
    handler: async ({ db, auth, params, body, deps }) =>
      changeEntity(db, auth, params.id, body, await deps.policies.read(db, auth.tenantId)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/entities/{id}',
    tag: 'Catalog',
    access: 'catalog:admin',
    summary: 'Delete an entity with its relations (both ends), changelog and manifest',
    params: entityRefParams,
    responses: { 204: { description: 'Deleted' } },
    handler: ({ db, auth, params }) => removeEntity(db, auth, params.id),
  }),
  ...entityDetailRoutes,
];
