import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config';
import type { NotifiedLoop } from '../core/notifiedLoop';
import { ScorecardQueueWaker } from '../core/scorecards/queueWaker';
import { WebhookDispatcher } from '../core/webhooks/dispatcher';
import { ChangeListener } from '../db/notifications';
import { OutboxDrain } from '../search/outbox';
import type { WorkerClients } from './clients';

// The loops the pools run beside their Temporal workers, woken by commits rather than run as
// workflows. Each reads every tenant's rows, so it runs on the system role.

export interface RunningLoop {
  /** Ends the loop, then its listener. */
  stop(): Promise<void>;
}

/** Starts the loop `create` makes on a change listener of its own; resolves once both run. */
async function startNotifiedLoop(
  config: Config,
  logger: Logger,
  create: (changes: ChangeListener) => NotifiedLoop,
): Promise<RunningLoop> {
  const changes = new ChangeListener(config.database.appUrl, logger);
  const loop = create(changes);
  await changes.start();
  await loop.start();
  return {
    async stop() {
      await loop.stop();
      await changes.close();
    },
  };
}

/**
 * The search pool's outbox drain: a loop, not a workflow, since indexing lag is the point (a
 * workflow task per batch would add its own tens of milliseconds and history) and the outbox
 * itself is the durable record.
 */
export const startOutboxDrain = (config: Config, { system, search }: WorkerClients, logger: Logger) =>
  startNotifiedLoop(config, logger, (changes) => new OutboxDrain(system, search, changes, logger));

/** The platform pool's scorecard waker: wakes the scoring workflow of each tenant that queued re-scoring. */
export const startScorecardWaker = (
  config: Config,
  { system }: Pick<WorkerClients, 'system'>,
  temporal: Client,
  logger: Logger,
) => startNotifiedLoop(config, logger, (changes) => new ScorecardQueueWaker(system, temporal, changes, config, logger));

/** The platform pool's webhook dispatcher (core/webhooks/dispatcher.ts): events to deliveries and their workflows. */
export const startWebhookDispatch = (
  config: Config,
  { system }: Pick<WorkerClients, 'system'>,
  temporal: Client,
  logger: Logger,
) => startNotifiedLoop(config, logger, (changes) => new WebhookDispatcher(system, temporal, changes, config, logger));
