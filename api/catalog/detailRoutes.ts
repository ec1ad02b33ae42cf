import { entityActivity, listChangelog } from '../../core/catalog/changelogStore';
import { entityIdOf, getEntity, getReadme } from '../../core/catalog/entityStore';
import { resolveOwner } from '../../core/catalog/ownerStore';
import { listRelations, topologyAround } from '../../core/catalog/relationStore';
import { notFound } from '../../core/errors';
import { repositoriesOfEntity } from '../../core/repositories/store';
import { TenantSearch } from '../../search/queries';
import type { Knex } from 'knex';
import { publishedMoldsFor } from '../../core/forge/moldStore';
import { defineRoute } from '../http/route';
import { docEntrySchema } from '../search/schemas';
import {
  changelogSchema,
  entityActivitySchema,
  quickActionsSchema,
  relationListSchema,
  statusSchema,
  topologyQuery,
  topologySchema,
} from './detailSchemas';
import { entityRefParams, readmeSchema } from './schemas';

// What the catalog knows around one entity: its changelog, README, activity, relations,
// topology, quick actions and status. Each is a 404 when the tenant has no such entity.

const TOPOLOGY_MAX_NODES = 500;
const QUICK_ACTIONS_MAX = 100;
const ENTITY_DOCS_MAX = 100;
const DAY_MS = 86_400_000;

const entityDocsSchema = {
  type: 'object',
  required: ['docs'],
  properties: { docs: { type: 'array', items: docEntrySchema, maxItems: ENTITY_DOCS_MAX } },
  additionalProperties: false,
} as const;

const limitQuery = (defaultLimit: number, maximum: number) =>
  ({
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum, default: defaultLimit } },
    additionalProperties: false,
  }) as const;

/** The full names of the crawled repositories the entity links to; undefined when there is no such entity. */
async function linkedRepositories(trx: Knex, ref: string): Promise<string[] | undefined> {
  const entity = await getEntity(trx, ref);
  return entity && repositoriesOfEntity(trx, entity.links);
}

async function requireEntityId(db: Parameters<typeof entityIdOf>[0], ref: string): Promise<string> {
  const id = await entityIdOf(db, ref);
  if (!id) throw notFound('Entity');
  return id;
}

export const entityDetailRoutes = [
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/changelog',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'The entity’s changelog, newest first: one entry per changed field of every write, with the actor',
    params: entityRefParams,
    query: limitQuery(100, 500),
    responses: { 200: { description: '`{entries}`', schema: changelogSchema } },
    handler: async ({ db, params, query }) => ({
      entries: await listChangelog(db, await requireEntityId(db, params.id), query.limit),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/readme',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'The entity’s README: its own (from the API or its manifest), else that of a repository it links to (a link to the repository’s page), as the crawler indexed it; 404 when there is none',
    params: entityRefParams,
    transaction: 'on-demand',
    responses: { 200: { description: '`{content, format}`', schema: readmeSchema } },
    handler: async ({ auth, deps, params, inTenant }) => {
      const known = await inTenant(async (trx) => {
        const readme = await getReadme(trx, params.id);
        if (readme === undefined) throw notFound('Entity');
        return readme ?? { repositories: (await linkedRepositories(trx, params.id)) ?? [] };
      });
      if ('content' in known) return known;
      const crawled = known.repositories.length
        ? await new TenantSearch(deps.search, auth.tenantId).readme(known.repositories)
        : undefined;
      if (!crawled) throw notFound('README');
      return { content: crawled.content ?? '', format: 'markdown' as const };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/docs',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'The documentation files (READMEs and Markdown under docs/) of the repositories the entity links to, as the crawler indexed them; the content of each is at /docs/{id}',
    params: entityRefParams,
    transaction: 'on-demand',
    responses: { 200: { description: '`{docs}`', schema: entityDocsSchema } },
    handler: async ({ auth, deps, params, inTenant }) => {
      const repositories = await inTenant((trx) => linkedRepositories(trx, params.id));
      if (!repositories) throw notFound('Entity');
      if (!repositories.length) return { docs: [] };
      const { entries } = await new TenantSearch(deps.search, auth.tenantId).docs(
        { offset: 0, limit: ENTITY_DOCS_MAX },
        repositories,
      );
      return { docs: entries };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/activity',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'The entity’s audit entries and changelog entries, merged, newest first',
    params: entityRefParams,
    query: limitQuery(50, 100),
    responses: { 200: { description: '`{items}`', schema: entityActivitySchema } },
    handler: async ({ db, params, query }) => ({
      items: await entityActivity(db, await requireEntityId(db, params.id), query.limit),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/relations',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'The entity’s relations at both ends: outgoing by their type, incoming by the inverse name (depends_on → dependency_of, provides_api → api_provided_by, consumes_api → api_consumed_by, part_of → has_part)',
    params: entityRefParams,
    query: limitQuery(500, 1000),
    responses: { 200: { description: '`{relations, total}`', schema: relationListSchema } },
    handler: async ({ db, params, query }) => listRelations(db, await requireEntityId(db, params.id), query.limit),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/topology',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: `The entities within \`depth\` relations of this one (either direction; default 2, at most 5) and the relations among them; each entity once, at its nearest depth; at most ${TOPOLOGY_MAX_NODES} nodes`,
    params: entityRefParams,
    query: topologyQuery,
    responses: { 200: { description: '`{root, depth, nodes, edges, truncated}`', schema: topologySchema } },
    handler: async ({ db, params, query }) => {
      const root = await requireEntityId(db, params.id);
      return { root, depth: query.depth, ...(await topologyAround(db, root, query.depth, TOPOLOGY_MAX_NODES)) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/quick-actions',
    tag: 'Catalog',
    access: 'catalog:read',
    summary: 'Published molds that declare the entity’s type among their `entity_types`, by name',
    params: entityRefParams,
    responses: { 200: { description: '`{quick_actions}`', schema: quickActionsSchema } },
    handler: async ({ db, params }) => {
      const entity = await getEntity(db, params.id);
      if (!entity) throw notFound('Entity');
      return { quick_actions: await publishedMoldsFor(db, entity.type, QUICK_ACTIONS_MAX) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/status',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'What is known about the entity: lifecycle, owner resolved to a team (a team slug) or a user and their teams (an email), last activity',
    params: entityRefParams,
    responses: { 200: { description: 'The status', schema: statusSchema } },
    handler: async ({ db, params }) => {
      const entity = await getEntity(db, params.id);
      if (!entity) throw notFound('Entity');
      const owner = await resolveOwner(db, entity.owner);
      return {
        entity: { id: entity.id, service_id: entity.service_id, name: entity.name, type: entity.type },
        lifecycle: entity.lifecycle,
        owner: { value: entity.owner, ...owner },
        last_activity_at: entity.last_activity_at,
        inactive_days: Math.floor((Date.now() - Date.parse(entity.last_activity_at)) / DAY_MS),
      };
    },
  }),
];
