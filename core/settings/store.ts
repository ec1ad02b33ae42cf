import type { Knex } from 'knex';

// The tenant's settings object: one row per tenant, absent until the first write ({} then).

export async function readSettings(trx: Knex): Promise<Record<string, unknown>> {
  const row = await trx('tenant_settings').first<{ settings: Record<string, unknown> } | undefined>('settings');
  return row?.settings ?? {};
}

/** The settings before the write, read under a row lock so two writes audit what each replaced. */
export async function lockSettings(trx: Knex): Promise<Record<string, unknown>> {
  const row = await trx('tenant_settings')
    .forUpdate()
    .first<{ settings: Record<string, unknown> } | undefined>('settings');
  return row?.settings ?? {};
}

export async function writeSettings(trx: Knex, tenantId: string, settings: Record<string, unknown>): Promise<void> {
  await trx('tenant_settings')
    .insert({ tenant_id: tenantId, settings: JSON.stringify(settings), updated_at: trx.fn.now() })
    .onConflict('tenant_id')
    .merge();
}
