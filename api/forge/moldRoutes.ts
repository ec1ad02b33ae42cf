import type { CallerPrincipal } from '../../core/auth/principal';
import { actorOf, recordAudit } from '../../core/audit/store';
import { conflict, invalid, notFound } from '../../core/errors';
import { shapeAQuery, shapeAWindow, shapeAForgePagination } from '../http/pagination';
import { defineRoute } from '../http/route';
import { moldProblems } from '../../core/forge/moldRules';
import {
  deleteMold,
  findMold,
  insertMold,
  listMolds,
  setPublished,
  toMold,
  updateMold,
} from '../../core/forge/moldStore';
import { createMoldSchema, updateMoldSchema } from '../../core/forge/types';
import { moldPageSchema, moldSchema, slugParams } from './schemas';

/** Unpublished molds are drafts: only those who may change molds see them. */
const seesDrafts = (auth: CallerPrincipal) => auth.permissions.has('forge:write');

function rejectInvalidMold(mold: Parameters<typeof moldProblems>[0]): void {
  const problems = moldProblems(mold);
  if (problems.length) throw invalid('Invalid mold', problems);
}

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
    handler: async ({ db, auth, body }) => {
      rejectInvalidMold(body);
      const mold = await insertMold(db, auth.tenantId, actorOf(auth).actor, body);
      if (!mold) throw conflict(`A mold with slug "${body.slug}" already exists`);
      await recordAudit(db, auth, {
        eventType: 'mold.created',
        action: 'create',
        targetType: 'mold',
        targetId: mold.slug,
      });
      return mold;
    },
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
    handler: async ({ db, auth, params, body }) => {
      const current = await findMold(db, params.slug);
      if (!current) throw notFound('Mold');
      rejectInvalidMold({
        parameters: body.parameters ?? current.parameters,
        actions: body.actions ?? current.actions,
      });
      const mold = await updateMold(db, params.slug, body);
      if (!mold) throw notFound('Mold');
      await recordAudit(db, auth, {
        eventType: 'mold.updated',
        action: 'update',
        targetType: 'mold',
        targetId: params.slug,
      });
      return mold;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/forge/molds/{slug}',
    tag: 'Forge',
    access: 'forge:admin',
    summary: 'Delete a mold (its runs stay, with the copy they started with)',
    params: slugParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, params }) => {
      if (!(await deleteMold(db, params.slug))) throw notFound('Mold');
      await recordAudit(db, auth, {
        eventType: 'mold.deleted',
        action: 'delete',
        targetType: 'mold',
        targetId: params.slug,
      });
    },
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
      handler: async ({ db, auth, params }) => {
        const mold = await setPublished(db, params.slug, action === 'publish');
        if (!mold) throw notFound('Mold');
        await recordAudit(db, auth, {
          eventType: `mold.${action}ed`,
          action,
          targetType: 'mold',
          targetId: params.slug,
        });
        return mold;
      },
    }),
  ),
];
