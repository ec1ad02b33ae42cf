import type { Knex } from 'knex';
import { statusMessage, type SyncTarget } from './syncRules';
import { SYNCED_TYPES } from './types';

// The outcome of a sync on its integration, and the schedule's look across tenants. A sync that
// fails keeps `last_sync` at the last success; one that succeeds makes the integration `active`
// and drops the message. Neither brings back an integration set `inactive` while it ran.

/** A success: `active`, `last_sync` now, no message. */
export async function recordSyncSuccess(trx: Knex, integrationId: string): Promise<void> {
  await trx('integrations')
    .where({ id: integrationId })
    .whereNot({ status: 'inactive' })
    .update({ status: 'active', last_sync: trx.fn.now(), status_message: null, updated_at: trx.fn.now() });
}

/** A failure: `error` with why (readable, no secret and no raw answer); `last_sync` kept. */
export async function recordSyncFailure(trx: Knex, integrationId: string, reason: string): Promise<void> {
  await trx('integrations')
    .where({ id: integrationId })
    .whereNot({ status: 'inactive' })
    .update({ status: 'error', status_message: statusMessage(reason), updated_at: trx.fn.now() });
}

/**
 * Every integration the schedule syncs, across tenants (through the system role): of a synced
 * type and not `inactive` (`error` too: its next success brings it back), oldest sync first.
 */
export async function syncTargets(system: Knex): Promise<SyncTarget[]> {
  const rows: { tenant_id: string; id: string }[] = await system('integrations')
    .whereIn('type', SYNCED_TYPES)
    .whereNot({ status: 'inactive' })
    .orderByRaw('last_sync asc nulls first, id')
    .select('tenant_id', 'id');
  return rows.map((row) => ({ tenantId: row.tenant_id, integrationId: row.id }));
}
