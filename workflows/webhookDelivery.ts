import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import type {
  DeliveryStatus,
  RetrySchedule,
  WebhookDeliveryInput,
  WebhookDeliveryWorkflow,
} from '../core/webhooks/types';

/**
 * The wait before retry `attempt` + 1 (attempt counts from 1): exponential from `base_delay_ms`,
 * capped at `max_delay_ms`, with jitter (`random` in [0, 1)) so that receivers coming back are
 * not hit by every delivery at once; never below a tenth of the exponential step.
 */
export function retryDelayMs(attempt: number, schedule: RetrySchedule, random: number): number {
  const step = Math.min(schedule.base_delay_ms * 2 ** Math.min(attempt - 1, 30), schedule.max_delay_ms);
  return Math.round(step * (0.1 + 0.9 * random));
}

/**
 * One webhook delivery: attempts until the receiver takes it (2xx), answers finally (another
 * 4xx, 410, the egress guard), or the retry window closes. Between attempts it waits out an
 * exponential backoff with jitter, or a 429's Retry-After. The waits are durable timers: a worker
 * restart loses nothing. Its history stays short: at most a few dozen attempts fit the window.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<DeliveryStatus> {
  const { attemptDelivery, giveUpDelivery } = proxyActivities<WebhookActivities>({
    // The attempt's own timeout bounds the POST; the margin, the database work around it.
    startToCloseTimeout: input.attempt_timeout_ms + 60_000,
    retry: { initialInterval: '1s', maximumInterval: '1 minute' },
  });
  const ref = { tenant_id: input.tenant_id, delivery_id: input.delivery_id };
  const startedAt = workflowInfo().startTime.getTime();
  for (let attempt = 1; ; attempt++) {
    const result = await attemptDelivery(ref);
    if (result.outcome === 'delivered') return 'delivered';
    if (result.outcome === 'final') return 'failed';
    // Math.random is seeded per workflow run: the same jitter on replay.
    const delay = result.retry_after_ms ?? retryDelayMs(attempt, input.retry, Math.random());
    if (Date.now() + delay - startedAt > input.retry.window_ms) {
      await giveUpDelivery(ref);
      return 'failed';
    }
    await sleep(delay);
  }
}

webhookDelivery satisfies WebhookDeliveryWorkflow;
