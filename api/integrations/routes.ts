import { changedAddresses, keepOmittedSecrets } from '../../core/crypto/secretConfig';
import { recordAudit } from '../../core/audit/store';
import { conflict, invalid, notFound } from '../../core/errors';
import { startSync } from '../../core/integrations/syncControl';
import { syncRefusal } from '../../core/integrations/syncRules';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { keysetQuery } from '../roles/schemas';
import { compileBody } from '../http/validation';
import {
  createIntegrationSchema,
  integrationConfigSchemas,
  integrationConfigsPageSchema,
  integrationIdParams,
  integrationSchema,
  integrationsPageSchema,
  syncStartedSchema,
  updateIntegrationSchema,
} from './schemas';
import type { IntegrationType } from '../../core/integrations/types';
import {
  deleteIntegration,
  getIntegration,
  insertIntegration,
  listIntegrationConfigs,
  listIntegrations,
  openConfig,
  toIntegration,
  updateIntegration,
} from '../../core/integrations/store';

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

/**
 * An update's new config: the replacement with the stored secrets it leaves out, checked against
 * its type's rules. A stored secret is never sent to a new address: with `base_url` (or another
 * address) changed, each must come again in the same request.
 */
function replacementConfig(
  type: IntegrationType,
  stored: Record<string, unknown>,
  replacement: Record<string, unknown>,
) {
  const { config, kept } = keepOmittedSecrets(stored, replacement);
  configValidators[type]?.({ config });
  const moved = changedAddresses(stored, replacement);
  if (kept.length && moved.length) {
    throw invalid(
      `Changing ${moved.join(', ')} needs the secrets sent again in the same request: stored ones are not sent to a new address`,
      kept.map((path) => ({ field: `body.config.${path}`, message: `required when ${moved.join(', ')} changes` })),
    );
  }
  return config;
}

export const integrationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/integrations',
    tag: 'Integrations',
    access: 'admin:read',
    summary: 'List integrations, newest first (secret config values are never returned)',
    query: keysetQuery,
    responses: { 200: { description: '`{integrations, next_cursor}`', schema: integrationsPageSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listIntegrations(db, window), window);
      return { integrations: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/integrations',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Create an integration. A vcs-host-a config needs `base_url` and `token`',
    body: createIntegrationSchema,
    responses: { 201: { description: 'The integration', schema: integrationSchema } },
    handler: async ({ db, auth, body, deps }) => {
      const row = await insertIntegration(db, deps.keyring, auth.tenantId, {
        name: body.name,
        type: body.type,
        config: body.config,
      });
      await recordAudit(db, auth, audit(row.id, 'create', { name: row.name, type: row.type }));
      return toIntegration(row);
    },
  }),
  // Before /integrations/{id}, so `configs` is not read as an id.
  defineRoute({
    method: 'GET',
    path: '/integrations/configs',
    tag: 'Integrations',
    access: 'admin:read',
    summary:
      "The tenant's configurations, newest first: every integration a tenant admin created (Shipyard creates none itself), " +
      'its config with secrets masked, and whether a sync pulls from it',
    query: keysetQuery,
    responses: { 200: { description: '`{configs, next_cursor}`', schema: integrationConfigsPageSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listIntegrationConfigs(db, window), window);
      return { configs: page.items, next_cursor: page.next_cursor };
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
    summary:
      'Update name, status or config. A new config replaces the old one but keeps the stored secrets it leaves out, ' +
      'unless it changes where requests go (`base_url`, any `*_url`, `*_host`): then they must be sent again',
    params: integrationIdParams,
    body: updateIntegrationSchema,
    responses: { 200: { description: 'The integration', schema: integrationSchema } },
    handler: async ({ db, auth, params, body, deps }) => {
      const stored = await getIntegration(db, params.id);
      if (!stored) throw notFound('Integration');
      const config = body.config && replacementConfig(stored.type, openConfig(deps.keyring, stored), body.config);
      const row = await updateIntegration(db, deps.keyring, stored, { name: body.name, status: body.status, config });
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
  defineRoute({
    method: 'POST',
    path: '/integrations/{id}/sync',
    tag: 'Integrations',
    access: 'admin:write',
    transaction: 'on-demand',
    summary:
      'Starts an immediate pull (a Temporal workflow on the platform pool): vcs-host-a lists repositories, ' +
      'incident-tool-a brings incidents and on-call. One per integration at a time: while one runs, the answer is ' +
      'that one (`already_running`). The outcome lands on the integration (`status`, `status_message`, `last_sync`)',
    params: integrationIdParams,
    responses: {
      200: { description: 'The sync started, or the one running', schema: syncStartedSchema },
      409: { description: 'The type has nothing to sync (only vcs-host-a and incident-tool-a do), or it is inactive' },
    },
    handler: async ({ auth, params, deps, inTenant }) => {
      const row = await inTenant((trx) => getIntegration(trx, params.id));
      if (!row) throw notFound('Integration');
      const refusal = syncRefusal(row);
      if (refusal) throw conflict(refusal);
      const started = await startSync(deps.temporal, { tenantId: auth.tenantId, integrationId: row.id });
      if (!started.already_running)
        await inTenant((trx) =>
          recordAudit(trx, auth, {
            ...audit(row.id, 'sync', { workflow_id: started.workflow_id }),
            eventType: 'integration.sync_started',
          }),
        );
      return started;
    },
  }),
];
