import type { ActivityDeps } from './deps';
import { notifyExpiringApiKeys, type ApiKeyExpiryInput } from '../core/notifications/apiKeyExpiry';

export function createNotificationActivities({ db, system }: ActivityDeps) {
  return {
    /** Idempotent (once per key and owner): a retry notifies no one twice. */
    notifyExpiringApiKeys: ({ notice_ms }: ApiKeyExpiryInput) => notifyExpiringApiKeys({ db, system }, notice_ms),
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
