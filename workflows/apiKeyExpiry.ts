import { proxyActivities } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications';
import type { ApiKeyExpiryInput, ApiKeyExpiryResult, ApiKeyExpiryWorkflow } from '../core/notifications/apiKeyExpiry';

const { notifyExpiringApiKeys } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 10 },
});

/**
 * The daily notice of API keys about to expire (the `shipyard-api-key-expiry` schedule on the
 * platform pool): every key expiring within the notice, its owner notified once.
 */
export async function apiKeyExpiryNotices(input: ApiKeyExpiryInput): Promise<ApiKeyExpiryResult> {
  return notifyExpiringApiKeys(input);
}

apiKeyExpiryNotices satisfies ApiKeyExpiryWorkflow;
