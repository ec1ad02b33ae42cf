import type { Knex } from 'knex';
import type { EventKind } from './types';

// The one way code records a webhook event: in the transaction of the change that caused it, so
// the event commits with the change or not at all (the insert trigger wakes the dispatcher).

/** One event of `kind` for the tenant's subscribed webhooks; `data` is the payload's `data`. */
export async function recordEvent(trx: Knex, tenantId: string, kind: EventKind, data: object): Promise<void> {
  await recordEvents(trx, tenantId, kind, [data]);
}

/** Many events of one kind in one statement (bulk writers: one insert for a whole batch). */
export async function recordEvents(trx: Knex, tenantId: string, kind: EventKind, data: object[]): Promise<void> {
  if (!data.length) return;
  await trx('webhook_events').insert(data.map((item) => ({ tenant_id: tenantId, kind, data: JSON.stringify(item) })));
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
       from runs where id = ?`,
    [kind, runId],
  );
}
