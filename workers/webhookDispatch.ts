import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config';
import { WebhookDispatcher } from '../core/webhooks/dispatcher';
import { ChangeListener } from '../db/notifications';
import type { WorkerClients } from './clients';

/**
 * The platform pool's webhook dispatcher, beside its Temporal worker (core/webhooks/dispatcher.ts).
 * It reads every tenant's events, so it runs on the system role. Resolves once it runs; `stop`
 * ends it and its listener.
 */
export async function startWebhookDispatch(
  config: Config,
  { system }: Pick<WorkerClients, 'system'>,
  temporal: Client,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const changes = new ChangeListener(config.database.appUrl, logger);
  const dispatcher = new WebhookDispatcher(system, temporal, changes, config, logger);
  await changes.start();
  await dispatcher.start();
  return {
    async stop() {
      await dispatcher.stop();
      await changes.close();
    },
  };
}
