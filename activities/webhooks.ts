import { Context } from '@temporalio/activity';
import { recordSystemAudit } from '../core/audit/store';
import { EgressError, type EgressFailure } from '../core/egress/egressClient';
import { deliveryBody, deliveryHeaders, retryAfterMs, statusOutcome } from '../core/webhooks/rules';
import { deliveryWork, disableWebhook, openSecret, recordAttempt, setDeliveryStatus } from '../core/webhooks/store';
import type { AttemptOutcome, DeliveryAttempt, DeliveryStatus } from '../core/webhooks/types';
import { withTenant } from '../db/tenancy';
import type { ActivityDeps } from './deps';

/** Bytes of a receiver's answer read (and dropped): deliveries log the status, not the body. */
const ANSWER_BYTES = 1024;

/** Egress failures that another attempt cannot fix: the guard's refusal, a bad URL, a redirect loop. */
const FINAL_FAILURES: ReadonlySet<EgressFailure> = new Set(['refused', 'invalid-url', 'too-many-redirects']);

type DeliveryRef = { tenant_id: string; delivery_id: string };

/**
 * One delivery attempt per call: the POST through the egress guard, bounded by the attempt
 * timeout, logged on the delivery. The workflow decides when to try again. (How many deliveries
 * of a webhook or tenant are under way at once is the dispatcher's to cap: core/webhooks/dispatcher.ts.)
 */
export function createWebhookActivities(deps: Pick<ActivityDeps, 'db' | 'keyring' | 'egress' | 'config'>) {
  const { db, keyring, egress, config } = deps;

  type Sent =
    | { status: number; retryAfter?: string; duration: number }
    | { failure: EgressFailure; error: string; duration: number };

  async function post(url: string, headers: Record<string, string>, body: string): Promise<Sent> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    try {
      const res = await egress.request({
        method: 'POST',
        url,
        headers,
        body,
        timeoutMs: config.webhooks.attemptTimeoutMs,
        maxBodyBytes: ANSWER_BYTES,
        signal: Context.current().cancellationSignal,
        responseHeaders: ['retry-after'],
      });
      return { status: res.status, retryAfter: res.headers?.['retry-after'], duration: took() };
    } catch (err) {
      if (!(err instanceof EgressError)) throw err;
      return { failure: err.failure, error: err.message, duration: took() };
    }
  }

  return {
    async attemptDelivery({ tenant_id, delivery_id }: DeliveryRef): Promise<AttemptOutcome> {
      const work = await withTenant(db, tenant_id, (trx) => deliveryWork(trx, delivery_id));
      // Deleted with its webhook, or already settled (a retried activity whose log was written).
      if (!work) return { outcome: 'final' };
      if (work.delivery.status !== 'pending')
        return { outcome: work.delivery.status === 'delivered' ? 'delivered' : 'final' };
      const { webhook, delivery, event } = work;
      const at = new Date();
      const log = async (entry: Omit<DeliveryAttempt, 'attempt' | 'at'>, status: DeliveryStatus, disable = false) =>
        withTenant(db, tenant_id, async (trx) => {
          await recordAttempt(
            trx,
            delivery_id,
            { attempt: delivery.attempts + 1, at: at.toISOString(), ...entry },
            status,
          );
          if (disable && (await disableWebhook(trx, webhook.id))) {
            await recordSystemAudit(trx, tenant_id, 'webhook-delivery', {
              eventType: 'webhook.disabled',
              action: 'disable',
              targetType: 'webhook',
              targetId: webhook.id,
              metadata: { reason: 'the receiver answered 410 Gone', delivery_id },
            });
          }
        });
      if (!webhook.active) {
        await log({ status_code: null, duration_ms: 0, error: 'the webhook is disabled' }, 'failed');
        return { outcome: 'final' };
      }

      const body = deliveryBody(event);
      const headers = deliveryHeaders(openSecret(keyring, webhook), delivery.message_id, body, at);
      const sent = await post(webhook.url, headers, body);

      if ('failure' in sent) {
        const final = FINAL_FAILURES.has(sent.failure);
        await log({ status_code: null, duration_ms: sent.duration, error: sent.error }, final ? 'failed' : 'pending');
        return final ? { outcome: 'final' } : { outcome: 'retry' };
      }
      const outcome = statusOutcome(sent.status);
      const entry = { status_code: sent.status, duration_ms: sent.duration };
      if (outcome === 'delivered') {
        await log({ ...entry, error: null }, 'delivered');
        return { outcome: 'delivered' };
      }
      if (outcome === 'retry') {
        await log({ ...entry, error: `answered ${sent.status}` }, 'pending');
        const retry_after_ms = sent.status === 429 ? retryAfterMs(sent.retryAfter, new Date()) : undefined;
        return retry_after_ms === undefined ? { outcome: 'retry' } : { outcome: 'retry', retry_after_ms };
      }
      const error =
        outcome === 'disable' ? 'answered 410 Gone: the webhook is disabled' : `answered ${sent.status}: not retried`;
      await log({ ...entry, error }, 'failed', outcome === 'disable');
      return { outcome: 'final' };
    },

    /** Out of retries: the delivery is failed (its log holds why). */
    async giveUpDelivery({ tenant_id, delivery_id }: DeliveryRef): Promise<void> {
      await withTenant(db, tenant_id, (trx) => setDeliveryStatus(trx, delivery_id, 'failed'));
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
