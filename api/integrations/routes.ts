import { recordAudit } from '../audit/store';
import { notFound } from '../http/errors';
import { defineRoute } from '../http/route';
import { compileBody } from '../http/validation';
import {
  createIntegrationSchema,
  integrationConfigSchemas,
  integrationIdParams,
  integrationSchema,
  updateIntegrationSchema,
  type IntegrationType,
} from './schemas';
import { deleteIntegration, getIntegration, insertIntegration, listIntegrations, mergeConfig, toIntegration, updateIntegration } from './store';

// Checks a merged config against its type's rules, reporting problems as `body.config.*`.
const configValidators = Object.fromEntries(
  Object.entries(integrationConfigSchemas).map(([type, schema]) => [
    type,
    compileBody({ type: 'object', properties: { config: schema } }),
  ]),
) as Partial<Record<IntegrationType, (value: unknown) => unknown>>;

const audit = (id: string, action: string, metadata?: Record<string, unknown>) => ({
  eventType: `integration.${action}d`,
  action,
  targetType: 'integration',
  targetId: id,
  metadata,
});

export const integrationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/integrations',
    tag: 'Integrations',
    access: 'admin:read',
    summary: 'List integrations, newest first (secret config values are never returned)',
    responses: { 200: { description: '`{integrations}`', schema: { type: 'object', properties: { integrations: { type: 'array', items: integrationSchema } } } } },
    handler: async ({ db }) => ({ integrations: (await listIntegrations(db)).map(toIntegration) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/integrations',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Create an integration. A vcs-host-a config needs `base_url` and `token`',
    body: createIntegrationSchema,
    responses: { 201: { description: 'The integration', schema: integrationSchema } },
    handler: async ({ db, auth, body }) => {
      const row = await insertIntegration(db, auth.tenantId, { name: body.name, type: body.type, config: body.config });
      await recordAudit(db, auth, audit(row.id, 'create', { name: row.name, type: row.type }));
      return toIntegration(row);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/integrations/{id}',
    tag: 'Integrations',
    access: 'admin:read',
    summary: 'An integration',
    params: integrationIdParams,
    responses: { 200: { description: 'The integration', schema: integrationSchema } },
    handler: async ({ db, params }) => {
      const row = await getIntegration(db, params.id);
      if (!row) throw notFound('Integration');
      return toIntegration(row);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/integrations/{id}',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Update name, status or config. A new config replaces the old one, except secret keys it leaves out, which are kept',
    params: integrationIdParams,
    body: updateIntegrationSchema,
    responses: { 200: { description: 'The integration', schema: integrationSchema } },
    handler: async ({ db, auth, params, body }) => {
      const stored = await getIntegration(db, params.id);
      if (!stored) throw notFound('Integration');
      const config = body.config && mergeConfig(stored.config, body.config);
      if (config) configValidators[stored.type]?.({ config });
      const row = await updateIntegration(db, params.id, { name: body.name, status: body.status, config });
      if (!row) throw notFound('Integration');
      await recordAudit(db, auth, audit(row.id, 'update', { fields: Object.keys(body) }));
      return toIntegration(row);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/integrations/{id}',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Delete an integration',
    params: integrationIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, params }) => {
      if (!(await deleteIntegration(db, params.id))) throw notFound('Integration');
      await recordAudit(db, auth, audit(params.id, 'delete'));
    },
  }),
];
