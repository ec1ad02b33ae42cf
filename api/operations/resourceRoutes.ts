import type { Knex } from 'knex';
import { entityIdOf } from '../../core/catalog/entityStore';
import { notFound } from '../../core/errors';
import { entityDeployments, entityInstances } from '../../core/operations/entityWorkloadStore';
import { listResources, type ResourceFilter } from '../../core/operations/resourceStore';
import type { AppDeps } from '../deps';
import { entityRefParams } from '../catalog/schemas';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import {
  deploymentsQuery,
  deploymentsSchema,
  instancesSchema,
  resourceListQuery,
  resourcePageSchema,
  zombieListQuery,
  zombiePageSchema,
} from './resourceSchemas';

// Operations resources (workloads with their entity, team, GitOps resource and zombie signals;
// docs/operations-views.md) in shape D, the zombies among them, and what the agents reported
// about one entity.

const ENTITY_INSTANCES_MAX = 500;

/** A shape D page of resources: the rows, `next_cursor` (sequential only) and the filtered total. */
async function resourcePage(
  db: Knex,
  deps: AppDeps,
  query: { limit: number; cursor?: string },
  filter: ResourceFilter,
) {
  const window = shapeDWindow(query);
  const { rows, total } = await listResources(db, filter, window, deps.config.operations.zombieAgeMs);
  const page = shapeDPage(rows, window);
  return { items: page.items, next_cursor: page.next_cursor, total };
}

async function requireEntityId(db: Knex, ref: string): Promise<string> {
  const id = await entityIdOf(db, ref);
  if (!id) throw notFound('Entity');
  return id;
}

const zombieAgeSeconds = (deps: AppDeps) => Math.round(deps.config.operations.zombieAgeMs / 1000);

export const resourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/operations/resources',
    tag: 'Operations',
    access: 'operations:read',
    summary:
      'Operations resources: each workload with its entity, team, GitOps resource, status and zombie signals, in id order (shape D: opaque cursor, sequential only; an altered or foreign cursor is a 400)',
    query: resourceListQuery,
    responses: { 200: { description: '`{resources, next_cursor, total}`', schema: resourcePageSchema } },
    handler: async ({ db, deps, query }) => {
      const { limit, cursor, ...filter } = query;
      const page = await resourcePage(db, deps, { limit, cursor }, filter);
      return { resources: page.items, next_cursor: page.next_cursor, total: page.total };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/zombies',
    tag: 'Operations',
    access: 'operations:read',
    summary:
      'Zombie workloads: present ones known for longer than SHIPYARD_OPERATIONS_ZOMBIE_AGE that have no ready replica, are scaled to zero or belong to no entity, or that no push has named for that long',
    query: zombieListQuery,
    responses: {
      200: { description: '`{zombies, next_cursor, total, zombie_age_seconds}`', schema: zombiePageSchema },
    },
    handler: async ({ db, deps, query }) => {
      const { limit, cursor, ...filter } = query;
      const page = await resourcePage(db, deps, { limit, cursor }, { ...filter, zombie: true });
      return {
        zombies: page.items,
        next_cursor: page.next_cursor,
        total: page.total,
        zombie_age_seconds: zombieAgeSeconds(deps),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/k8s/workloads',
    tag: 'Catalog',
    access: 'operations:read',
    summary: `The entity’s present workloads, as its clusters’ agents report them (at most ${ENTITY_INSTANCES_MAX})`,
    params: entityRefParams,
    responses: { 200: { description: '`{instances}`', schema: instancesSchema } },
    handler: async ({ db, params }) => ({
      instances: await entityInstances(db, await requireEntityId(db, params.id), ENTITY_INSTANCES_MAX),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/deployments',
    tag: 'Catalog',
    access: 'operations:read',
    summary: 'The entity’s deployments (image changes of its workloads between two pushes), newest first',
    params: entityRefParams,
    query: deploymentsQuery,
    responses: { 200: { description: '`{deployments}`', schema: deploymentsSchema } },
    handler: async ({ db, params, query }) => ({
      deployments: await entityDeployments(db, await requireEntityId(db, params.id), query.limit),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/resources',
    tag: 'Catalog',
    access: 'operations:read',
    summary: 'The entity’s operations resources (as /operations/resources, for its workloads)',
    params: entityRefParams,
    query: resourceListQuery,
    responses: { 200: { description: '`{resources, next_cursor, total}`', schema: resourcePageSchema } },
    handler: async ({ db, deps, params, query }) => {
      const entity = await requireEntityId(db, params.id);
      const { limit, cursor, ...filter } = query;
      const page = await resourcePage(db, deps, { limit, cursor }, { ...filter, entity });
      return { resources: page.items, next_cursor: page.next_cursor, total: page.total };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/zombies',
    tag: 'Catalog',
    access: 'operations:read',
    summary: 'The entity’s zombie workloads (as /operations/zombies)',
    params: entityRefParams,
    query: zombieListQuery,
    responses: {
      200: { description: '`{zombies, next_cursor, total, zombie_age_seconds}`', schema: zombiePageSchema },
    },
    handler: async ({ db, deps, params, query }) => {
      const entity = await requireEntityId(db, params.id);
      const { limit, cursor, ...filter } = query;
      const page = await resourcePage(db, deps, { limit, cursor }, { ...filter, entity, zombie: true });
      return {
        zombies: page.items,
        next_cursor: page.next_cursor,
        total: page.total,
        zombie_age_seconds: zombieAgeSeconds(deps),
      };
    },
  }),
];
