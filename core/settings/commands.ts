import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { checkSettingsSize, settingsChange } from './rules';
import { lockSettings, writeSettings } from './store';

/**
 * Replaces the tenant's settings object, audited with the top-level keys it added, removed and
 * changed (never their values). The first write of a tenant has no row to lock; the insert's
 * conflict clause makes two concurrent first writes both succeed, the last one winning.
 */
export async function replaceSettings(
  trx: Knex,
  auth: CallerPrincipal,
  settings: Record<string, unknown>,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  checkSettingsSize(settings, maxBytes);
  const before = await lockSettings(trx);
  await writeSettings(trx, auth.tenantId, settings);
  await recordAudit(trx, auth, {
    eventType: 'settings.updated',
    action: 'update',
    targetType: 'tenant_settings',
    targetId: auth.tenantId,
    metadata: { ...settingsChange(before, settings) },
  });
  return settings;
}
