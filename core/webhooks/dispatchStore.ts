import type { Knex } from 'knex';

// The dispatcher's SQL, on the system role (every tenant's rows): events become deliveries, and
// deliveries get their workflow when there is room for them. Both steps may be repeated after a crash: an event is marked in
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

/**
 * Deliveries whose workflow may start now, oldest first: not started yet, and within the room
 * their webhook and their tenant have for deliveries under way (started, not settled). So a dead
 * or slow receiver holds at most `perWebhook` deliveries, and a tenant at most `perTenant`,
 * however many events wait: the rest wait here, as rows, not as workflows.
 */
export async function startableDeliveries(
  system: Knex,
  room: { limit: number; perWebhook: number; perTenant: number },
): Promise<{ id: string; tenant_id: string }[]> {
  const { rows } = await system.raw<{ rows: { id: string; tenant_id: string }[] }>(
    // Reads what the caps bound, never the whole backlog: the webhooks with waiting deliveries
    // (a loose index scan, one probe each), each one's oldest waiting up to its room, and the
    // deliveries under way (at most the caps' worth per tenant).
    `with recursive waiting_webhooks as (
       (select webhook_id from webhook_deliveries where not started order by webhook_id limit 1)
       union all
       select (select d.webhook_id from webhook_deliveries d
                where not d.started and d.webhook_id > w.webhook_id order by d.webhook_id limit 1)
         from waiting_webhooks w where w.webhook_id is not null
     ), webhook_busy as (
       select webhook_id, count(*) as n from webhook_deliveries where started and status = 'pending' group by webhook_id
     ), tenant_busy as (
       select tenant_id, count(*) as n from webhook_deliveries where started and status = 'pending' group by tenant_id
     ), webhook_room as (
       -- Ranked in their tenant only once their webhook has room: a dead receiver's backlog must
       -- not take the places of its tenant's other webhooks.
       select d.id, d.tenant_id, d.created_at,
              row_number() over (partition by d.tenant_id order by d.created_at, d.id) as in_tenant
         from waiting_webhooks w
         left join webhook_busy wb on wb.webhook_id = w.webhook_id
         cross join lateral (
           select id, tenant_id, created_at from webhook_deliveries d
            where d.webhook_id = w.webhook_id and not d.started
            order by created_at, id limit greatest(? - coalesce(wb.n, 0), 0)
         ) d
        where w.webhook_id is not null
     )
     select r.id, r.tenant_id from webhook_room r left join tenant_busy tb on tb.tenant_id = r.tenant_id
      where r.in_tenant <= ? - coalesce(tb.n, 0)
      order by r.created_at, r.id limit ?`,
    [room.perWebhook, room.perTenant, room.limit],
  );
  return rows;
}

export async function markStarted(system: Knex, ids: string[]): Promise<void> {
  if (ids.length) await system('webhook_deliveries').whereIn('id', ids).update({ started: true });
}
