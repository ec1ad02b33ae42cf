import type { Knex } from 'knex';
import type { Keyring } from '../crypto/keyring';
import { keysetStatement, type KeysetOrder } from '../paging';
import { toIso } from '../timestamps';
import { WEBHOOK_DISPATCH_CHANNEL } from './dispatchStore';
import type { DeliveryAttempt, DeliveryStatus, EventKind } from './types';

// Webhooks' and deliveries' SQL, as the API and the delivery activity see them (in a tenant's
// transaction). The secret is sealed with the keyring, bound to the tenant, and opened only
// for signing.

export interface WebhookRow {
  id: string;
  tenant_id: string;
  integration_id: string;
  url: string;
  events: EventKind[];
  secret_sealed: string;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'integration_id',
  'url',
  'events',
  'secret_sealed',
  'active',
  'created_at',
  'updated_at',
];

/** The response shape: never the secret. */
export const toWebhook = (row: WebhookRow) => ({
  id: row.id,
  integration_id: row.integration_id,
  url: row.url,
  events: row.events,
  active: row.active,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

const SEALED = /^([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/]+={0,2})$/;

const sealSecret = (keyring: Keyring, secret: string, tenantId: string) => {
  const { keyId, data } = keyring.seal(Buffer.from(secret), Buffer.from(tenantId));
  return `${keyId}:${data.toString('base64')}`;
};

/** The webhook's `whsec_` secret in the clear, for signing. */
export function openSecret(keyring: Keyring, row: Pick<WebhookRow, 'secret_sealed' | 'tenant_id'>): string {
  const [, keyId, data] = SEALED.exec(row.secret_sealed) ?? [];
  return keyring.open({ keyId, data: Buffer.from(data, 'base64') }, Buffer.from(row.tenant_id)).toString('utf8');
}

/** Oldest first, as they were added. */
const LIST_ORDER: KeysetOrder = {
  columns: [
    { column: 'created_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'asc',
};

export const listWebhooks = keysetStatement<WebhookRow, ReturnType<typeof toWebhook>, { integrationId: string }>({
  order: LIST_ORDER,
  build: (q, { integrationId }) => q('webhooks').where({ integration_id: integrationId }).select(COLUMNS),
  toItem: toWebhook,
});

export async function getWebhook(trx: Knex, id: string): Promise<WebhookRow | undefined> {
  return trx('webhooks').where({ id }).first(COLUMNS);
}

export async function insertWebhook(
  trx: Knex,
  keyring: Keyring,
  webhook: {
    tenantId: string;
    integrationId: string;
    url: string;
    events: EventKind[];
    secret: string;
    active: boolean;
  },
): Promise<WebhookRow> {
  const [row] = await trx('webhooks')
    .insert({
      tenant_id: webhook.tenantId,
      integration_id: webhook.integrationId,
      url: webhook.url,
      events: webhook.events,
      secret_sealed: sealSecret(keyring, webhook.secret, webhook.tenantId),
      active: webhook.active,
    })
    .returning(COLUMNS);
  return row;
}

export async function updateWebhook(
  trx: Knex,
  keyring: Keyring,
  stored: WebhookRow,
  changes: { url?: string; events?: EventKind[]; secret?: string; active?: boolean },
): Promise<WebhookRow> {
  const { secret, ...plain } = changes;
  const [row] = await trx('webhooks')
    .where({ id: stored.id })
    .update({
      ...plain,
      ...(secret !== undefined && { secret_sealed: sealSecret(keyring, secret, stored.tenant_id) }),
      updated_at: trx.fn.now(),
    })
    .returning(COLUMNS);
  return row;
}

export async function deleteWebhook(trx: Knex, id: string): Promise<boolean> {
  return (await trx('webhooks').where({ id }).delete()) > 0;
}

/** Turns a webhook off (a 410 from its receiver); true when it was on. */
export async function disableWebhook(trx: Knex, id: string): Promise<boolean> {
  return (await trx('webhooks').where({ id, active: true }).update({ active: false, updated_at: trx.fn.now() })) > 0;
}

// ---------------------------------------------------------------------------------------------
// Deliveries
// ---------------------------------------------------------------------------------------------

/** Attempts a delivery keeps in its log (the oldest go first). */
export const ATTEMPT_LOG_SIZE = 50;

interface DeliveryListRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventKind;
  message_id: string;
  status: DeliveryStatus;
  attempts: number;
  attempt_log: DeliveryAttempt[];
  created_at: Date;
  updated_at: Date;
}

const toDelivery = (row: DeliveryListRow) => ({
  id: row.id,
  webhook_id: row.webhook_id,
  event_id: row.event_id,
  event_type: row.event_type,
  message_id: row.message_id,
  status: row.status,
  attempts: row.attempts,
  attempt_log: row.attempt_log,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

/** A webhook's deliveries, newest first. */
export const listDeliveries = keysetStatement<DeliveryListRow, ReturnType<typeof toDelivery>, { webhookId: string }>({
  order: {
    columns: [
      { column: 'd.created_at', kind: 'timestamp' },
      { column: 'd.id', kind: 'uuid' },
    ],
    direction: 'desc',
  },
  build: (q, { webhookId }) =>
    q('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where('d.webhook_id', webhookId)
      .select(
        'd.id',
        'd.webhook_id',
        'd.event_id',
        'e.kind as event_type',
        'd.message_id',
        'd.status',
        'd.attempts',
        'd.attempt_log',
        'd.created_at',
        'd.updated_at',
      ),
  toItem: toDelivery,
});

/**
 * A new delivery of a delivery's event to its webhook, with the same message id (receivers drop
 * the duplicate they already processed): the dispatcher starts its workflow. Undefined when the
 * delivery is not the webhook's.
 */
export async function insertRedelivery(trx: Knex, webhookId: string, deliveryId: string) {
  const { rows } = await trx.raw<{ rows: DeliveryListRow[] }>(
    `with inserted as (
       insert into webhook_deliveries (tenant_id, webhook_id, event_id, message_id)
       select tenant_id, webhook_id, event_id, message_id from webhook_deliveries where id = ? and webhook_id = ?
       returning *
     )
     select i.*, e.kind as event_type from inserted i join webhook_events e on e.id = i.event_id`,
    [deliveryId, webhookId],
  );
  return rows[0] && toDelivery(rows[0]);
}

/** What one attempt needs: the delivery, its webhook and its event. */
export interface DeliveryWork {
  delivery: { id: string; message_id: string; status: DeliveryStatus; attempts: number };
  webhook: WebhookRow;
  event: { kind: EventKind; data: unknown; created_at: Date };
}

export async function deliveryWork(trx: Knex, deliveryId: string): Promise<DeliveryWork | undefined> {
  const row = await trx('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .where('d.id', deliveryId)
    .first(
      'd.id as delivery_id',
      'd.message_id',
      'd.status',
      'd.attempts',
      'e.kind',
      'e.data',
      'e.created_at as event_created_at',
      ...COLUMNS.map((column) => `w.${column}`),
    );
  if (!row) return undefined;
  return {
    delivery: { id: row.delivery_id, message_id: row.message_id, status: row.status, attempts: row.attempts },
    webhook: Object.fromEntries(COLUMNS.map((column) => [column, row[column]])) as unknown as WebhookRow,
    event: { kind: row.kind, data: row.data, created_at: row.event_created_at },
  };
}

/** A settled delivery's room goes to the next one waiting: the dispatcher hears of it at commit. */
async function wakeDispatcherIfSettled(trx: Knex, status: DeliveryStatus): Promise<void> {
  if (status !== 'pending') await trx.raw('select pg_notify(?, ?)', [WEBHOOK_DISPATCH_CHANNEL, '']);
}

/** Logs an attempt (keeping the latest ATTEMPT_LOG_SIZE) and sets the delivery's status. */
export async function recordAttempt(
  trx: Knex,
  deliveryId: string,
  attempt: DeliveryAttempt,
  status: DeliveryStatus,
): Promise<void> {
  await trx.raw(
    `update webhook_deliveries
        set attempts = attempts + 1, status = ?, updated_at = now(),
            attempt_log = jsonb_path_query_array(attempt_log || ?::jsonb, '$[last - ${ATTEMPT_LOG_SIZE - 1} to last]')
      where id = ?`,
    [status, JSON.stringify([attempt]), deliveryId],
  );
  await wakeDispatcherIfSettled(trx, status);
}

export async function setDeliveryStatus(trx: Knex, deliveryId: string, status: DeliveryStatus): Promise<void> {
  await trx('webhook_deliveries').where({ id: deliveryId }).update({ status, updated_at: trx.fn.now() });
  await wakeDispatcherIfSettled(trx, status);
}
