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
