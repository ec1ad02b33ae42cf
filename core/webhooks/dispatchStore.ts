import type { Knex } from 'knex';

// The dispatcher's SQL, on the system role (every tenant's rows): events become deliveries, and
// deliveries get their workflow. Both steps may be repeated after a crash: an event is marked in
// the transaction that adds its deliveries, and a delivery is marked started only after its
// workflow start was accepted (or found already started).

/** The NOTIFY channel of new events and redeliveries (the migration's trigger). */
export const WEBHOOK_DISPATCH_CHANNEL = 'webhook_dispatch';

/**
 * Turns up to `batchSize` undispatched events, oldest first, into one delivery per active
 * webhook of their tenant subscribed to their kind, and marks them dispatched. Events another
 * dispatcher holds are skipped. Returns the events dispatched.
 */
export async function dispatchEvents(system: Knex, batchSize: number): Promise<number> {
  const { rows } = await system.raw<{ rows: { dispatched: number }[] }>(
    `with batch as (
       select id, tenant_id, kind from webhook_events
        where dispatched_at is null order by seq limit ? for update skip locked
     ), deliveries as (
       insert into webhook_deliveries (tenant_id, webhook_id, event_id, message_id)
       select b.tenant_id, w.id, b.id, 'msg_' || replace(gen_random_uuid()::text, '-', '')
         from batch b join webhooks w on w.tenant_id = b.tenant_id and w.active and b.kind = any(w.events)
     ), marked as (
       update webhook_events e set dispatched_at = now() from batch b where e.id = b.id returning 1
     )
     select count(*)::int as dispatched from marked`,
    [batchSize],
  );
  return rows[0].dispatched;
}

/** Deliveries whose workflow is not started yet, oldest first. */
export async function unstartedDeliveries(system: Knex, limit: number): Promise<{ id: string; tenant_id: string }[]> {
  return system('webhook_deliveries')
    .where({ started: false })
    .orderBy('created_at')
    .limit(limit)
    .select('id', 'tenant_id');
}

export async function markStarted(system: Knex, ids: string[]): Promise<void> {
  if (ids.length) await system('webhook_deliveries').whereIn('id', ids).update({ started: true });
}
