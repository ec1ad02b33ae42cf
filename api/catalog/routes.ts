import { changeEntity, createEntity, findEntity, removeEntity } from '../../core/catalog/entityCommands';
import { notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { createEntitySchema, entityRefParams, entitySchema, updateEntitySchema } from './schemas';

// Entities: create, read, update, delete. @koa/router runs the first route that matches, so the
// static /entities/... paths (summary, zombies) are declared before /entities/{id}.

export const entityRoutes = [
  defineRoute({
    method: 'POST',
    path: '/entities',
    tag: 'Catalog',
    access: 'catalog:write',
    summary:
      'Create an entity (`source: api`). service_id is derived from the name when absent; 409 when taken. Relations name targets by service_id or id; an unknown target is a 400',
    body: createEntitySchema,
    responses: { 201: { description: 'The entity', schema: entitySchema } },
    handler: ({ db, auth, body }) => createEntity(db, auth, body, 'api'),
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
    responses: { 200: { description: 'The entity', schema: entitySchema } },
    handler: ({ db, auth, params, body }) => changeEntity(db, auth, params.id, body),
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
];
