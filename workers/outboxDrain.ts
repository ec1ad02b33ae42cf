import type { Logger } from 'pino';
import type { Config } from '../core/config';
import { ChangeListener } from '../db/notifications';
import { OutboxDrain } from '../search/outbox';
import type { WorkerClients } from './clients';

/**
 * The search pool's outbox drain, beside its Temporal worker: a loop woken by commits, not a
 * workflow, since indexing lag is the point (a workflow task per batch would add its own tens of
 * milliseconds and history) and the outbox itself is the durable record. It reads every tenant's
 * rows, so it runs on the system role. Resolves once it runs; `stop` ends it and its listener.
 */
export async function startOutboxDrain(
  config: Config,
  { system, search }: WorkerClients,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const changes = new ChangeListener(config.database.appUrl, logger);
  const drain = new OutboxDrain(system, search, changes, logger);
  await drain.start();
  await changes.start();
  return {
    async stop() {
      await drain.stop();
      await changes.close();
    },
  };
}
