import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config';
import { ScorecardQueueWaker } from '../core/scorecards/queueWaker';
import { ChangeListener } from '../db/notifications';
import type { WorkerClients } from './clients';

/**
 * The platform pool's scorecard waker, beside its Temporal worker: a loop woken by commits that
 * queued re-scoring, which wakes each such tenant's scoring workflow. It reads every tenant's
 * queue, so it runs on the system role. Resolves once it runs; `stop` ends it and its listener.
 */
export async function startScorecardWaker(
  config: Config,
  { system }: Pick<WorkerClients, 'system'>,
  temporal: Client,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const changes = new ChangeListener(config.database.appUrl, logger);
  const waker = new ScorecardQueueWaker(system, temporal, changes, config, logger);
  await changes.start();
  await waker.start();
  return {
    async stop() {
      await waker.stop();
      await changes.close();
    },
  };
}
