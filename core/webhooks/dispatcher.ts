import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ChangeListener } from '../../db/notifications';
import type { Config } from '../config';
import { NotifiedLoop } from '../notifiedLoop';
import { shipyardSearchAttributes, workflowId } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { dispatchEvents, markStarted, startableDeliveries, WEBHOOK_DISPATCH_CHANNEL } from './dispatchStore';
import type { WebhookDeliveryInput, WebhookDeliveryWorkflow } from './types';

/** Events turned into deliveries per transaction, and workflow starts per pass. */
const BATCH_SIZE = 200;
/** Workflow starts sent at once. */
const START_CONCURRENCY = 20;

export const webhookDeliveryWorkflowId = (deliveryId: string) => workflowId('webhook-delivery', deliveryId);

export function webhookDeliveryInput(config: Config, tenantId: string, deliveryId: string): WebhookDeliveryInput {
  const { retryBaseDelayMs, retryMaxDelayMs, retryWindowMs, attemptTimeoutMs } = config.webhooks;
  return {
    tenant_id: tenantId,
    delivery_id: deliveryId,
    retry: { base_delay_ms: retryBaseDelayMs, max_delay_ms: retryMaxDelayMs, window_ms: retryWindowMs },
    attempt_timeout_ms: attemptTimeoutMs,
  };
}

/**
 * The platform workers' webhook dispatcher: woken by commits that recorded events, asked for a
 * redelivery or settled a delivery (and every `dispatchPollMs` regardless), it turns undispatched
 * events into deliveries, then starts one delivery workflow per delivery not yet started, as far
 * as its webhook's and tenant's room for deliveries under way allows. Both steps are
 * durable rows, so a dispatcher killed anywhere leaves nothing behind that the next pass (here or
 * in another worker) does not pick up; a workflow id per delivery makes a repeated start a no-op.
 */
export class WebhookDispatcher extends NotifiedLoop {
  constructor(
    private readonly system: Knex,
    private readonly temporal: Client,
    changes: ChangeListener,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    super(changes, WEBHOOK_DISPATCH_CHANNEL);
  }

  protected async loop(): Promise<void> {
    while (!this.stopped) {
      let more = false;
      try {
        more = (await dispatchEvents(this.system, BATCH_SIZE)) === BATCH_SIZE;
        more = (await this.startDeliveries()) === BATCH_SIZE || more;
      } catch (err) {
        this.logger.warn({ err }, 'webhook dispatch failed: retrying at the next poll');
      }
      if (!more) await this.pause.sleep(this.config.webhooks.dispatchPollMs);
    }
  }

  /** Starts the workflows of up to BATCH_SIZE deliveries that have room; returns how many it took. */
  private async startDeliveries(): Promise<number> {
    const { inFlightPerWebhook, inFlightPerTenant } = this.config.webhooks;
    const deliveries = await startableDeliveries(this.system, {
      limit: BATCH_SIZE,
      perWebhook: inFlightPerWebhook,
      perTenant: inFlightPerTenant,
    });
    for (let i = 0; i < deliveries.length && !this.stopped; i += START_CONCURRENCY) {
      const chunk = deliveries.slice(i, i + START_CONCURRENCY);
      await Promise.all(chunk.map(({ id, tenant_id }) => this.startDelivery(tenant_id, id)));
      await markStarted(
        this.system,
        chunk.map((delivery) => delivery.id),
      );
    }
    return deliveries.length;
  }

  private async startDelivery(tenantId: string, deliveryId: string): Promise<void> {
    try {
      await this.temporal.workflow.start<WebhookDeliveryWorkflow>('webhookDelivery', {
        workflowId: webhookDeliveryWorkflowId(deliveryId),
        taskQueue: TASK_QUEUES.platform,
        args: [webhookDeliveryInput(this.config, tenantId, deliveryId)],
        // A delivery is one workflow, ever: a start repeated after a crash must not send it again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: shipyardSearchAttributes({ kind: 'webhook-delivery', tenantId }),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}
