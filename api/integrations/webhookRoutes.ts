import type { Config } from '../../core/config';
import { parseEgressAllow, type EgressAllowList } from '../../core/egress/egressRules';
import { notFound } from '../../core/errors';
import { changeWebhook, createWebhook } from '../../core/webhooks/commands';
import {
  deleteWebhook,
  getWebhook,
  insertRedelivery,
  listDeliveries,
  listWebhooks,
  toWebhook,
} from '../../core/webhooks/store';
import { getIntegration } from '../../core/integrations/store';
import { recordAudit } from '../../core/audit/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import type { AppDeps } from '../deps';
import { defineRoute } from '../http/route';
import { keysetQuery } from '../roles/schemas';
import { integrationIdParams } from './schemas';
import {
  createdWebhookSchema,
  createWebhookSchema,
  deliveriesPageSchema,
  deliveryIdParams,
  deliverySchema,
  updateWebhookSchema,
  webhookIdParams,
  webhookSchema,
  webhooksPageSchema,
} from './webhookSchemas';

// Outbound webhooks of an integration (docs/webhooks.md): CRUD, the delivery log and redeliver.

/** The egress allow-list of a process's config, parsed once (a URL it refuses is a 400 at once). */
const allowLists = new WeakMap<Config, EgressAllowList>();
function writeServices(deps: AppDeps) {
  let allow = allowLists.get(deps.config);
  if (!allow) allowLists.set(deps.config, (allow = parseEgressAllow(deps.config.egressAllow)));
  return { keyring: deps.keyring, allow };
}

export const webhookRoutes = [
  defineRoute({
    method: 'GET',
    path: '/integrations/{id}/webhooks',
    tag: 'Integrations',
    access: 'admin:read',
    summary: "An integration's webhooks, oldest first (the secret is never returned)",
    params: integrationIdParams,
    query: keysetQuery,
    responses: { 200: { description: '`{webhooks, next_cursor}`', schema: webhooksPageSchema } },
    handler: async ({ db, params, query }) => {
      if (!(await getIntegration(db, params.id))) throw notFound('Integration');
      const window = shapeDWindow(query);
      const page = shapeDPage(await listWebhooks(db, window, { integrationId: params.id }), window);
      return { webhooks: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/integrations/{id}/webhooks',
    tag: 'Integrations',
    access: 'admin:write',
    summary:
      'Add a webhook: signed deliveries (Standard Webhooks) of the events named. Without `secret`, one is ' +
      'generated and returned in this answer only',
    params: integrationIdParams,
    body: createWebhookSchema,
    responses: { 201: { description: 'The webhook', schema: createdWebhookSchema } },
    handler: ({ db, auth, params, body, deps }) => createWebhook(db, writeServices(deps), auth, params.id, body),
  }),
  defineRoute({
    method: 'PUT',
    path: '/integrations/webhooks/{webhookId}',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Change a webhook: url, events, active, or a new secret',
    params: webhookIdParams,
    body: updateWebhookSchema,
    responses: { 200: { description: 'The webhook', schema: webhookSchema } },
    handler: async ({ db, auth, params, body, deps }) =>
      toWebhook(await changeWebhook(db, writeServices(deps), auth, params.webhookId, body)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/integrations/webhooks/{webhookId}',
    tag: 'Integrations',
    access: 'admin:write',
    summary: 'Delete a webhook and its delivery log (deliveries under way stop at their next attempt)',
    params: webhookIdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, params }) => {
      if (!(await deleteWebhook(db, params.webhookId))) throw notFound('Webhook');
      await recordAudit(db, auth, {
        eventType: 'webhook.deleted',
        action: 'delete',
        targetType: 'webhook',
        targetId: params.webhookId,
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/integrations/webhooks/{webhookId}/deliveries',
    tag: 'Integrations',
    access: 'admin:read',
    summary: "A webhook's deliveries, newest first, each with its attempts (status code, duration, error)",
    params: webhookIdParams,
    query: keysetQuery,
    responses: { 200: { description: '`{deliveries, next_cursor}`', schema: deliveriesPageSchema } },
    handler: async ({ db, params, query }) => {
      if (!(await getWebhook(db, params.webhookId))) throw notFound('Webhook');
      const window = shapeDWindow(query);
      const page = shapeDPage(await listDeliveries(db, window, { webhookId: params.webhookId }), window);
      return { deliveries: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/integrations/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
    tag: 'Integrations',
    access: 'admin:write',
    summary:
      "Deliver a delivery's event again, as a new delivery with the same `webhook-id` (receivers that " +
      'processed it drop the duplicate)',
    params: deliveryIdParams,
    responses: { 202: { description: 'The new delivery, pending', schema: deliverySchema } },
    handler: async ({ db, auth, params }) => {
      const delivery = await insertRedelivery(db, params.webhookId, params.deliveryId);
      if (!delivery) throw notFound('Delivery');
      await recordAudit(db, auth, {
        eventType: 'webhook.redelivered',
        action: 'redeliver',
        targetType: 'webhook',
        targetId: params.webhookId,
        metadata: { delivery_id: params.deliveryId, redelivery_id: delivery.id },
      });
      return delivery;
    },
  }),
];
