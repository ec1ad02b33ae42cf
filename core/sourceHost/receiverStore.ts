import type { Knex } from 'knex';
import { statement } from '../../db/statements';

// The receiver's SQL: finding a delivery's tenant before any tenant context exists, and the
// delivery ids it has processed (db/migrations/20261129000300_source_host_receiver.ts).

const sourceHostIntegration = statement<{ tenant_id: string }, { id: string }>((q, { id }) =>
  q('integrations').where({ id, type: 'vcs-host-a' }).first('tenant_id'),
);

/**
 * The tenant of the vcs-host-a integration `id` names: the one read across tenants, through the
 * system role (read-only, as token lookups do), before the delivery is checked in that tenant's
 * transaction. The id alone is no credential: the delivery's signature is.
 */
export async function sourceHostIntegrationTenant(system: Knex, id: string): Promise<string | undefined> {
  return (await sourceHostIntegration.first(system, { id }))?.tenant_id;
}

export interface Delivery {
  tenantId: string;
  integrationId: string;
  /** `X-Hub-Delivery`. */
  deliveryId: string;
  /** `X-Hub-Event`. */
  event: string;
}

/**
 * Records a delivery as processed; false when it was already. A copy arriving while the first is
 * still being processed waits on the key, then finds it taken once that one commits (or takes it,
 * should that one roll back): one of them processes.
 */
export async function recordDelivery(trx: Knex, delivery: Delivery): Promise<boolean> {
  const inserted = await trx('source_host_deliveries')
    .insert({
      tenant_id: delivery.tenantId,
      integration_id: delivery.integrationId,
      delivery_id: delivery.deliveryId,
      event: delivery.event,
    })
    .onConflict(['integration_id', 'delivery_id'])
    .ignore()
    .returning('delivery_id');
  return inserted.length > 0;
}

/** Forgets the integration's delivery ids older than `keepDays`: each delivery prunes its own integration's. */
export async function pruneDeliveries(trx: Knex, integrationId: string, keepDays: number): Promise<number> {
  return trx('source_host_deliveries')
    .where({ integration_id: integrationId })
    .where('received_at', '<', trx.raw('now() - make_interval(days => ?)', [keepDays]))
    .delete();
}
