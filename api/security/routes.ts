import { notFound } from '../../core/errors';
import { changeFindingStatus, recordFinding } from '../../core/security/findingCommands';
import { countFindings, getFinding, listFindings } from '../../core/security/findingStore';
import { securityOverview } from '../../core/security/overview';
import { readShapeAKeysetPage, shapeAKeysetWindow } from '../http/pagination';
import { defineRoute, OtherSuccess } from '../http/route';
import {
  findingIdParams,
  findingListQuery,
  findingListSchema,
  findingSchema,
  findingStatusSchema,
  overviewSchema,
  reportFindingSchema,
} from './schemas';

// Security findings and the overview (docs/security-findings.md).

const TAG = 'Security';

export const securityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/security/overview',
    tag: TAG,
    access: 'catalog:read',
    summary: 'The overall grade, entities by grade, and open and acknowledged findings by severity',
    responses: { 200: { description: 'The overview', schema: overviewSchema } },
    handler: ({ db }) => securityOverview(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/security/findings',
    tag: TAG,
    access: 'catalog:read',
    summary: 'List findings, newest first, filtered before paging; `cursor` is opaque',
    query: findingListQuery,
    responses: { 200: { description: '`{findings, pagination}`', schema: findingListSchema } },
    handler: async ({ db, query }) => {
      const { limit, cursor, ...filter } = query;
      const { items, pagination } = await readShapeAKeysetPage(
        shapeAKeysetWindow({ limit, cursor }),
        (window) => listFindings(db, filter, window),
        () => countFindings(db, filter),
      );
      return { findings: items, pagination: { total: pagination.total, nextCursor: pagination.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/security/findings',
    tag: TAG,
    access: 'catalog:write',
    summary:
      'Report a finding (source scanner or manual), deduplicated by entity, type and fingerprint: 201 when it opens one, 200 with the finding when it was known (refreshed; a resolved one reopens)',
    body: reportFindingSchema,
    responses: {
      200: { description: 'The known finding, refreshed', schema: findingSchema },
      201: {
        description: 'The finding, opened',
        schema: findingSchema,
        links: [{ to: 'GET /security/findings/{id}', parameters: { id: '$response.body#/id' } }],
      },
      400: { description: 'The body does not match, or entity_id names no entity of the tenant' },
    },
    handler: async ({ db, auth, body }) => {
      const { finding, opened } = await recordFinding(db, auth, body);
      return opened ? new OtherSuccess(201, finding) : finding;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/security/findings/{id}',
    tag: TAG,
    access: 'catalog:read',
    summary: 'A finding, with its entity’s name',
    params: findingIdParams,
    responses: { 200: { description: 'The finding', schema: findingSchema } },
    handler: async ({ db, params }) => {
      const finding = await getFinding(db, params.id);
      if (!finding) throw notFound('Security finding');
      return finding;
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/security/findings/{id}',
    tag: TAG,
    access: 'catalog:write',
    summary:
      'Move a finding’s status: open → acknowledged, resolved, false_positive; acknowledged → open, resolved, false_positive; resolved → open; false_positive → open. The current status is no move and changes nothing',
    params: findingIdParams,
    body: findingStatusSchema,
    responses: {
      200: { description: 'The finding', schema: findingSchema },
      409: { description: 'A move the table does not allow' },
    },
    handler: ({ db, auth, params, body }) => changeFindingStatus(db, auth, params.id, body.status),
  }),
];
