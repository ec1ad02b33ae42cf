import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ChangeListener } from '../../db/notifications';
import type { Config } from '../config';
import { NotifiedLoop } from '../notifiedLoop';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { SCORECARD_QUEUE_CHANNEL, tenantsWithQueuedWork } from './queueStore';
import {
  SCORECARDS_QUEUED_SIGNAL,
  scoreTenantInput,
  scoreTenantWorkflowId,
  type ScoreTenantWorkflow,
} from './scorecardWorkflows';

/**
 * The platform worker's waker: when a commit queued re-scoring (the queue trigger notifies, and
 * every `drainPollMs` regardless, for a notification missed), it wakes the scoring workflow of
 * each tenant with queued rows by signalWithStart. It scores nothing itself: the queue is the
 * durable record and the workflows drain it. Notifications arriving while it works fold into
 * one more pass. Any number of platform workers may run it: a workflow id is one run.
 */
export class ScorecardQueueWaker extends NotifiedLoop {
  constructor(
    private readonly system: Knex,
    private readonly temporal: Client,
    changes: ChangeListener,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    super(changes, SCORECARD_QUEUE_CHANNEL);
  }

  protected async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        for (const tenantId of await tenantsWithQueuedWork(this.system)) {
          // A stop need not wait for every tenant's wake-up: the next start finds the rest queued.
          if (this.stopped) break;
          await this.wakeTenant(tenantId);
        }
      } catch (err) {
        this.logger.warn({ err }, 'could not wake the scorecard workflows: retrying at the next poll');
      }
      await this.pause.sleep(this.config.scorecards.drainPollMs);
    }
  }

  private async wakeTenant(tenantId: string): Promise<void> {
    await this.temporal.workflow.signalWithStart<ScoreTenantWorkflow, []>('scoreTenant', {
      workflowId: scoreTenantWorkflowId(tenantId),
      taskQueue: TASK_QUEUES.platform,
      args: [scoreTenantInput(this.config, tenantId)],
      signal: SCORECARDS_QUEUED_SIGNAL,
      signalArgs: [],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'scorecards', tenantId }),
    });
  }
}
