// Outbound webhooks' vocabulary, defined once for schemas, stores, the database's CHECK
// constraints and docs/webhooks.md.

/** Every event kind a webhook may subscribe to (docs/webhooks.md shows a payload of each). */
export const EVENT_KINDS = [
  'entity.created',
  'entity.updated',
  'entity.deleted',
  'forge.run.completed',
  'forge.run.failed',
  'forge.run.awaiting_approval',
  'governance.action.created',
  'security.finding.opened',
  'license.activated',
  'agent.registered',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** pending: attempts go on; delivered: a 2xx came; failed: a final answer, or out of retries. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One attempt of a delivery, as the delivery log shows it. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** How one attempt ended, for the delivery workflow to act on. */
export type AttemptOutcome =
  /** A 2xx: done. */
  | { outcome: 'delivered' }
  /** Not to be tried again (a 4xx other than 429, the egress guard, the webhook gone or disabled). */
  | { outcome: 'final' }
  /** 5xx, 429, a timeout or a network error; `retry_after_ms` from a 429's Retry-After. */
  | { outcome: 'retry'; retry_after_ms?: number };

/** The delivery workflow's input: ids and durations only, never tenant data. */
export interface WebhookDeliveryInput {
  tenant_id: string;
  delivery_id: string;
  retry: RetrySchedule;
  /** The attempt's own timeout (the activity's is this and a margin for its database work). */
  attempt_timeout_ms: number;
}

export interface RetrySchedule {
  /** The first retry's delay; each later one doubles, up to `max_delay_ms`, with full jitter. */
  base_delay_ms: number;
  max_delay_ms: number;
  /** No attempt starts later than this after the first one. */
  window_ms: number;
}

export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<DeliveryStatus>;
