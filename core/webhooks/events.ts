import type { Knex } from 'knex';
import { escapeLiteral } from 'pg';
import type { EventKind } from './types';

// The one way code records a webhook event: in the transaction of the change that caused it, so
// the event commits with the change or not at all (the insert trigger wakes the dispatcher).
// An event no active webhook of the tenant subscribes to is not stored: most tenants have none,
// and their writes (an agent's push, a catalog import) should not pay for a table that only grows.

/** SQL: whether an active webhook of the current tenant takes `kind` (for bulk statements elsewhere too). */
export const subscribedTo = (kind: EventKind): string =>
  `exists (select 1 from webhooks w where w.tenant_id = app_current_tenant() and w.active and ${escapeLiteral(kind)} = any(w.events))`;

/** One event of `kind` for the tenant's subscribed webhooks; `data` is the payload's `data`. */
export async function recordEvent(trx: Knex, tenantId: string, kind: EventKind, data: object): Promise<void> {
  await recordEvents(trx, tenantId, kind, [data]);
}

/** Many events of one kind in one statement (bulk writers: one insert for a whole batch). */
export async function recordEvents(trx: Knex, tenantId: string, kind: EventKind, data: object[]): Promise<void> {
  if (!data.length) return;
  await trx.raw(
    `insert into webhook_events (tenant_id, kind, data)
     select ?, ?, item from jsonb_array_elements(?::jsonb) as item where ${subscribedTo(kind)}`,
    [tenantId, kind, JSON.stringify(data)],
  );
}

const RUN_STATUS_EVENTS: Partial<Record<string, EventKind>> = {
  completed: 'forge.run.completed',
  failed: 'forge.run.failed',
  awaiting_approval: 'forge.run.awaiting_approval',
};

/** After a forge run's status was written (same transaction): its event, when the status has one. */
export async function recordRunStatusEvent(trx: Knex, runId: string, status: string): Promise<void> {
  const kind = RUN_STATUS_EVENTS[status];
  if (!kind) return;
  await trx.raw(
    `insert into webhook_events (tenant_id, kind, data)
     select tenant_id, ?, jsonb_build_object('run', jsonb_build_object('id', id, 'mold_id', mold_id,
       'mold_slug', mold_slug, 'status', status, 'error', error, 'started_by', started_by,
       'created_at', created_at, 'finished_at', finished_at))
       from runs where id = ? and ${subscribedTo(kind)}`,
    [kind, runId],
  );
}
