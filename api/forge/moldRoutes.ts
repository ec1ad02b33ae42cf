import type { CallerPrincipal } from '../../core/auth/principal';
import { invalid, notFound } from '../../core/errors';
import { shapeAQuery, shapeAWindow, shapeAForgePagination } from '../http/pagination';
import { defineRoute } from '../http/route';
import { changeMold, createMold, publishMold, removeMold } from '../../core/forge/moldCommands';
import { findMold, listMolds, toMold } from '../../core/forge/moldStore';
import { createMoldSchema, updateMoldSchema } from '../../core/forge/types';
import { moldPageSchema, moldSchema, slugParams } from './schemas';

/** Unpublished molds are drafts: only those who may change molds see them. */
const seesDrafts = (auth: CallerPrincipal) => auth.permissions.has('forge:write');

const listQuery = {
  type: 'object',
  properties: {
    category: { type: 'string' },
    published: { type: 'boolean' },
    visibility: { type: 'string', enum: ['published', 'unpublished', 'all'] },
    ...shapeAQuery(),
  },
  additionalProperties: false,
} as const;

export const moldRoutes = [
  defineRoute({
    method: 'GET',
    path: '/forge/molds',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'List molds (readers see published molds only)',
    query: listQuery,
    responses: {
      200: {
        description:
          '`{molds, pagination}` (shape A, forge form): summaries; GET /forge/molds/{slug} has the whole mold',
        schema: moldPageSchema,
      },
    },
    handler: async ({ db, auth, query }) => {
      const fromVisibility =
        query.visibility === undefined || query.visibility === 'all' ? undefined : query.visibility === 'published';
      if (query.published !== undefined && fromVisibility !== undefined && query.published !== fromVisibility) {
        throw invalid('published and visibility disagree', [
          { field: 'query.visibility', message: 'contradicts query.published' },
        ]);
      }
      let published = query.published ?? fromVisibility;
      if (!seesDrafts(auth)) {
        if (published === false) return { molds: [], pagination: shapeAForgePagination(shapeAWindow(query), 0) };
        published = true;
      }
      const window = shapeAWindow(query);
      const { molds, total } = await listMolds(db, { category: query.category, published }, window);
      return { molds, pagination: shapeAForgePagination(window, total) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/forge/molds',
    tag: 'Forge',
    access: 'forge:write',
    summary: 'Create a mold (unpublished); its slug is unique in the tenant',
    body: createMoldSchema,
    responses: { 201: { description: 'The mold', schema: moldSchema } },
    handler: ({ db, auth, body }) => createMold(db, auth, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/forge/molds/{slug}',
    tag: 'Forge',
    access: 'forge:read',
    summary: 'One mold',
    params: slugParams,
    responses: { 200: { description: 'The mold', schema: moldSchema } },
    handler: async ({ db, auth, params }) => {
      const row = await findMold(db, params.slug);
      if (!row || (!row.published && !seesDrafts(auth))) throw notFound('Mold');
      return toMold(row);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/forge/molds/{slug}',
    tag: 'Forge',
    access: 'forge:write',
    summary: 'Change a mold (its version goes up; runs already started keep theirs)',
    params: slugParams,
    body: updateMoldSchema,
    responses: { 200: { description: 'The mold', schema: moldSchema } },
    handler: ({ db, auth, params, body }) => changeMold(db, auth, params.slug, body),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/forge/molds/{slug}',
    tag: 'Forge',
    access: 'forge:admin',
    summary: 'Delete a mold (its runs stay, with the copy they started with)',
    params: slugParams,
    responses: { 204: { description: 'Deleted' } },
    handler: ({ db, auth, params }) => removeMold(db, auth, params.slug),
  }),
  ...(['publish', 'unpublish'] as const).map((action) =>
    defineRoute({
      method: 'POST',
      path: `/forge/molds/{slug}/${action}`,
      tag: 'Forge',
      access: 'forge:write',
      summary: action === 'publish' ? 'Publish a mold: every user of the tenant sees it' : 'Unpublish a mold',
      params: slugParams,
      responses: { 200: { description: 'The mold', schema: moldSchema } },
      handler: ({ db, auth, params }) => publishMold(db, auth, params.slug, action),
    }),
  ),
];
