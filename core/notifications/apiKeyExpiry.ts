import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import { notifyUsers } from './commands';

// The daily look for API keys about to expire (the `shipyard-api-key-expiry` schedule on the
// platform pool, workflows/apiKeyExpiry.ts): each key's owner is told once, within
// `admin.apiKeyExpiryNoticeMs` (7 days) of its expiry.

export interface ApiKeyExpiryInput {
  notice_ms: number;
}
export interface ApiKeyExpiryResult {
  /** Keys expiring within the notice. */
  expiring: number;
  /** Notifications written (a key already noticed, or an owner who turned the kind off, adds none). */
  notified: number;
}
export type ApiKeyExpiryWorkflow = (input: ApiKeyExpiryInput) => Promise<ApiKeyExpiryResult>;

export const API_KEY_EXPIRY_SCHEDULE_ID = 'shipyard-api-key-expiry';

export function apiKeyExpirySchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: API_KEY_EXPIRY_SCHEDULE_ID,
    workflowType: 'apiKeyExpiryNotices',
    pool: 'platform',
    everyMs: config.admin.apiKeyExpiryScanIntervalMs,
    args: [{ notice_ms: config.admin.apiKeyExpiryNoticeMs }] satisfies Parameters<ApiKeyExpiryWorkflow>,
    kind: 'api-key-expiry',
  };
}

interface ExpiringKey {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  expires_at: Date;
}

/**
 * Reads every tenant's keys expiring within `noticeMs` (the system role), then notifies each
 * tenant's owners in that tenant's transaction (the app role), once per key and owner.
 */
export async function notifyExpiringApiKeys(
  deps: { db: Knex; system: Knex },
  noticeMs: number,
): Promise<ApiKeyExpiryResult> {
  const keys = await deps
    .system('api_keys')
    .whereNull('revoked_at')
    .where('expires_at', '>', deps.system.fn.now())
    .where('expires_at', '<=', deps.system.raw('now() + make_interval(secs => ?)', [noticeMs / 1000]))
    .orderBy(['tenant_id', 'expires_at'])
    .select<ExpiringKey[]>('id', 'tenant_id', 'user_id', 'name', 'expires_at');
  let notified = 0;
  for (const [tenantId, tenantKeys] of Map.groupBy(keys, (key) => key.tenant_id)) {
    notified += await withTenant(deps.db, tenantId, async (trx) => {
      let written = 0;
      for (const key of tenantKeys) {
        const users = await notifyUsers(trx, tenantId, [key.user_id], 'api_key_expiring', {
          title: `Your API key ${key.name} expires on ${key.expires_at.toISOString().slice(0, 10)}`,
          payload: { api_key_id: key.id, name: key.name, expires_at: key.expires_at.toISOString() },
          dedupeKey: `api_key:${key.id}:expiring`,
        });
        written += users.length;
      }
      return written;
    });
  }
  return { expiring: keys.length, notified };
}
