import type { Logger } from 'pino';
import type { ActivityDeps } from '../activities';
import type { Config } from '../core/config';
import { createEgressClient } from '../core/egress/egressClient';
import { parseEgressAllow } from '../core/egress/egressRules';
import { createPool } from '../db/pool';
import { createSearchEngine } from '../search/client';

export type WorkerClients = Omit<ActivityDeps, 'keyring' | 'temporal'> & { close(): Promise<void> };

/**
 * The clients a worker process's activities (and the search pool's outbox drain) share: the app
 * and system database roles, the search engine, and the one egress guard every request made for
 * a tenant goes through. `poolMax` bounds the app role's pool; `logger` takes knex's messages.
 */
export function createWorkerClients(
  config: Config,
  { poolMax = config.database.poolMax, logger }: { poolMax?: number; logger?: Logger } = {},
): WorkerClients {
  const limits = config.limits.database.worker;
  const db = createPool(config.database.appUrl, poolMax, { limits, logger });
  const system = createPool(config.database.systemUrl, 2, { limits, logger });
  const search = createSearchEngine(config);
  // Parsed once per worker process: a bad entry stops the worker's start, naming the entry.
  const egress = createEgressClient(parseEgressAllow(config.egressAllow));
  return {
    db,
    system,
    search,
    egress,
    config,
    async close() {
      await Promise.allSettled([db.destroy(), system.destroy(), search.client.close()]);
    },
  };
}
