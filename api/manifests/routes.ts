import { notFound } from '../../core/errors';
import { createManifest, deleteManifest, entityManifestYaml, updateManifest } from '../../core/manifests/commands';
import { importManifests } from '../../core/manifests/importCommands';
import { documentSummary } from '../../core/manifests/manifestRules';
import { getManifest, listManifests } from '../../core/manifests/store';
import type { ReadDocument } from '../../core/manifests/types';
import { errorEnvelopeSchema } from '../http/errorHandler';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import { entityRefParams } from '../catalog/schemas';
import {
  analysisSchema,
  appliedManifestSchema,
  conversionSchema,
  importReportSchema,
  manifestBodySchema,
  manifestListSchema,
  manifestListQuery,
  manifestRefParams,
  manifestSchema,
  validationSchema,
  yamlRefusals,
} from './schemas';

// Manifests: YAML documents that declare entities (README "Manifests"). The named operations
// (validate, analyze, convert, import) are static paths, declared before /manifests/{id}.
// YAML is read on the parser threads (deps.manifests) with no transaction held.

/** What every per-document answer says about a document. */
const described = (document: ReadDocument) => ({
  ...documentSummary(document),
  problems: document.problems,
  warnings: document.warnings,
});

export const manifestRoutes = [
  defineRoute({
    method: 'POST',
    path: '/manifests/validate',
    tag: 'Manifests',
    access: 'catalog:read',
    // Computes an answer and stores nothing: allowed while the tenant is read-only.
    readOnlyExempt: true,
    transaction: 'on-demand',
    summary:
      'Validate YAML (one or many documents, ours or Backstage’s): every problem with its path, line and column. Nothing is stored',
    body: manifestBodySchema,
    responses: { 200: { description: '`{valid, documents}`', schema: validationSchema }, ...yamlRefusals },
    handler: async ({ auth, body, deps }) => {
      const { documents } = await deps.manifests.read(auth.tenantId, body);
      return {
        valid: documents.length > 0 && documents.every((d) => d.outcome !== 'rejected'),
        documents: documents.map((document) => ({ ...described(document), outcome: document.outcome })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/manifests/analyze',
    tag: 'Manifests',
    access: 'catalog:read',
    // Computes an answer and stores nothing: allowed while the tenant is read-only.
    readOnlyExempt: true,
    transaction: 'on-demand',
    summary:
      'Quality of each document: a score 0–100 (owner 25, description 20, lifecycle 15, links 15, readme 15, tier 10; a weak field earns half) and what is missing, weak or invalid. Nothing is stored',
    body: manifestBodySchema,
    responses: { 200: { description: '`{documents}`', schema: analysisSchema }, ...yamlRefusals },
    handler: async ({ auth, body, deps }) => {
      const { documents, quality = [] } = await deps.manifests.read(auth.tenantId, { ...body, with: 'quality' });
      return {
        documents: documents.map((document, i) => ({
          ...described(document),
          ...(quality[i] ?? { score: null, checks: [], missing: [], weak: [] }),
        })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/manifests/convert',
    tag: 'Manifests',
    access: 'catalog:read',
    // Computes an answer and stores nothing: allowed while the tenant is read-only.
    readOnlyExempt: true,
    transaction: 'on-demand',
    summary:
      'Convert a Backstage-style descriptor (one or many documents: Component, API, System, Resource; Group is skipped) to manifests of our format. What has no equivalent is a warning. Nothing is stored',
    body: manifestBodySchema,
    responses: { 200: { description: '`{content, documents}`', schema: conversionSchema }, ...yamlRefusals },
    handler: async ({ auth, body, deps }) => {
      const { documents, rendered = '' } = await deps.manifests.read(auth.tenantId, {
        content: body.content,
        format: body.format ?? 'backstage',
        with: 'rendered',
      });
      return {
        content: rendered,
        documents: documents.map((document) => ({
          ...described(document),
          outcome: document.outcome,
          manifest: document.manifest ?? null,
        })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/manifests/import',
    tag: 'Manifests',
    access: 'catalog:write',
    summary:
      'Apply many documents (ours or Backstage’s) in one transaction: each is created, updated, skipped or rejected on its own, and relations may name any document of the import, in any order',
    // Up to a megabyte of YAML is parsed before a transaction (and a pooled connection) is taken.
    transaction: 'on-demand',
    body: manifestBodySchema,
    responses: {
      200: { description: 'Counts and, per document, what was done', schema: importReportSchema },
      ...yamlRefusals,
      409: {
        description:
          'An entity the import relates to was deleted while it was applied: nothing is written; send it again',
        schema: errorEnvelopeSchema,
      },
    },
    handler: async ({ inTenant, auth, body, deps }) => {
      const { documents } = await deps.manifests.read(auth.tenantId, body);
      return inTenant((trx) => importManifests(trx, auth, documents));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/manifests',
    tag: 'Manifests',
    access: 'catalog:read',
    summary: 'List manifests by service_id (without their content)',
    query: manifestListQuery,
    responses: { 200: { description: '`{manifests, next_cursor}`', schema: manifestListSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listManifests(db, window, { manifestType: query.manifest_type }), window);
      return { manifests: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/manifests',
    tag: 'Manifests',
    access: 'catalog:write',
    summary:
      'Apply one manifest: creates or updates the entity it declares (by service_id, `source: manifest`). A field it leaves out is cleared; applying it again changes nothing',
    transaction: 'on-demand',
    body: manifestBodySchema,
    responses: {
      200: {
        description: '`result` says whether the entity was created or updated',
        schema: appliedManifestSchema,
        links: linksTo(['GET /manifests/{id}', 'PUT /manifests/{id}', 'DELETE /manifests/{id}'], {
          id: '$response.body#/manifest/id',
        }),
      },
      ...yamlRefusals,
    },
    handler: async ({ inTenant, auth, body, deps }) => {
      const { documents } = await deps.manifests.read(auth.tenantId, body);
      return inTenant((trx) => createManifest(trx, auth, documents));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/manifests/{id}',
    tag: 'Manifests',
    access: 'catalog:read',
    summary: 'A manifest with its document, by id or by the service_id it declares',
    params: manifestRefParams,
    responses: { 200: { description: 'The manifest', schema: manifestSchema } },
    handler: async ({ db, params }) => {
      const manifest = await getManifest(db, params.id);
      if (!manifest) throw notFound('Manifest');
      return manifest;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/manifests/{id}',
    tag: 'Manifests',
    access: 'catalog:write',
    summary: 'Replace a manifest and apply it. Its document declares the same service_id, or none',
    params: manifestRefParams,
    transaction: 'on-demand',
    body: manifestBodySchema,
    responses: { 200: { description: 'The manifest and its entity', schema: appliedManifestSchema }, ...yamlRefusals },
    handler: async ({ inTenant, auth, params, body, deps }) => {
      const { documents } = await deps.manifests.read(auth.tenantId, body);
      return inTenant((trx) => updateManifest(trx, auth, params.id, documents));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/manifests/{id}',
    tag: 'Manifests',
    access: 'catalog:admin',
    summary: 'Delete a manifest and the entity it declares (with its relations and changelog)',
    params: manifestRefParams,
    responses: { 204: { description: 'Deleted' } },
    handler: ({ db, auth, params }) => deleteManifest(db, auth, params.id),
  }),
  defineRoute({
    method: 'GET',
    path: '/entities/{id}/manifest',
    tag: 'Catalog',
    access: 'catalog:read',
    summary:
      'The entity as a manifest of our format, rendered from its current state (whether or not a manifest declared it)',
    params: entityRefParams,
    responses: { 200: { description: 'YAML', contentType: 'application/yaml' } },
    handler: async ({ db, params, ctx }) => {
      const yaml = await entityManifestYaml(db, params.id);
      if (yaml === undefined) throw notFound('Entity');
      ctx.type = 'application/yaml';
      return yaml;
    },
  }),
];
