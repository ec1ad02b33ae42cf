import { loadConfig } from '../core/config';
import { createLogger, flushLog } from '../core/logging';
import { processSandbox } from '../core/sandbox/sandbox';
import { WORKER_POOLS, type WorkerPool } from '../core/taskQueues';
import { createWorkerClients } from './clients';
import { startOutboxDrain, startScorecardWaker, startWebhookDispatch } from './notifiedLoops';
import { createPoolWorkers, installTemporalRuntime } from './pools';

/**
 * Worker entry point. `main.ts forge` runs the forge pool alone (one container per pool in
 * production); with no argument it runs all three pools in one process for development.
 * SIGINT/SIGTERM drain in-flight tasks and exit.
 */
async function main(args: string[]): Promise<void> {
  const unknown = args.filter((arg) => !WORKER_POOLS.includes(arg as WorkerPool));
  if (unknown.length) throw new Error(`unknown pool(s): ${unknown.join(', ')} (pools: ${WORKER_POOLS.join(', ')})`);
  const pools = (args.length ? args : WORKER_POOLS) as WorkerPool[];

  const config = loadConfig();
  const logger = createLogger(config, `worker:${pools.join('+')}`);
  // First: the SDK's runtime takes its settings only before any connection exists.
  installTemporalRuntime(logger, config.metrics.workerAddress);
  const clients = createWorkerClients(config, { logger });
  const drain = pools.includes('search') ? await startOutboxDrain(config, clients, logger) : undefined;
  try {
    const workers = await createPoolWorkers(pools, config, clients);
    const waker = pools.includes('platform')
      ? await startScorecardWaker(config, clients, workers.temporal, logger)
      : undefined;
    const dispatch = pools.includes('platform')
      ? await startWebhookDispatch(config, clients, workers.temporal, logger)
      : undefined;
    // What the script sandbox's limits hold for here: per run (cgroup v2), or what it falls back to.
    if (pools.includes('forge')) {
      const sandbox = processSandbox(config.sandbox, { warn: (message) => logger.warn(message) });
      logger.info(`script sandbox: ${await sandbox.isolation()}`);
    }
    logger.info(
      { pools, namespace: config.temporal.namespace, metrics: config.metrics.workerAddress ?? 'off' },
      'workers running',
    );
    try {
      await workers.run();
    } finally {
      await waker?.stop();
      await dispatch?.stop();
    }
    logger.info('workers stopped');
  } finally {
    await drain?.stop();
    await clients.close();
    await flushLog(logger);
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
