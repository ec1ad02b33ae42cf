import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type Logger as SdkLogger,
} from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { activitiesFor, type ActivityDeps } from '../activities';
import type { Config } from '../core/config';
import { createKeyring } from '../core/crypto/keyring';
import { EncryptionCodec, encryptedDataConverter, FAILURE_CONVERTER_PATH } from '../core/crypto/payloadCodec';
import { reconcileSchedule } from '../core/forge/reconcileSchedule';
import { syncTickSchedule } from '../core/integrations/syncControl';
import { autoDisconnectSchedule } from '../core/license/licenseWorkflows';
import { apiKeyExpirySchedule } from '../core/notifications/apiKeyExpiry';
import { platformMetricsSchedule } from '../core/insights/platformMetricsSchedule';
import { retentionSchedule } from '../core/retention/retentionSchedule';
import { initiativeDeadlinesSchedule, rescoreAllSchedule } from '../core/scorecards/scorecardWorkflows';
import { ensureSchedule, type RecurringWorkflow } from '../core/schedules';
import type { SearchEngine } from '../search/client';
import { crawlTickSchedule } from '../search/crawlControl';
import { startReindexIfBehind } from '../search/reindex';
import { TASK_QUEUES, type WorkerPool } from '../core/taskQueues';

export interface PoolWorkers {
  /** Resolves when every worker has stopped (after `shutdown`, or on SIGINT/SIGTERM). */
  run(): Promise<void>;
  shutdown(): void;
  /** The workers' Temporal client (the platform pool's scorecard waker signals with it). */
  temporal: Client;
}

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Installs the Temporal SDK's runtime, once per process and before any worker or connection:
 * its log lines go into our JSON logs, and with `metricsAddress` (`ip:port`) it serves its own
 * metrics (`temporal_*`, durations in milliseconds as Temporal's dashboards expect) in Prometheus
 * format at http://<metricsAddress>/metrics. An address that cannot be bound is logged as an
 * error and the workers run without metrics: losing metrics should not stop the work.
 */
export function installTemporalRuntime(logger: Logger, metricsAddress?: string): void {
  const sdkLogger = new DefaultLogger('INFO', ({ level, message, meta }) =>
    logger[PINO_LEVEL[level]]({ ...meta, component: 'temporal-sdk' }, message),
  );
  if (metricsAddress) {
    try {
      Runtime.install({
        logger: sdkLogger,
        telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } },
      });
      return;
    } catch (err) {
      // The SDK binds the address inside install; a failure leaves no runtime installed.
      logger.error({ err, address: metricsAddress }, 'worker metrics unavailable: cannot serve them there');
    }
  }
  Runtime.install({ logger: sdkLogger });
}

/** The runtime with our logging and no metrics (the test suite's in-process workers). */
export function installTemporalLogging(logger: Logger): void {
  installTemporalRuntime(logger);
}

/**
 * The workflow code as every worker runs it (the workers here, the test suite's prebuilt
 * bundle): failures raised inside workflow code are encoded too.
 */
export function bundleWorkflows(logger: SdkLogger): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger,
  });
}

/** The recurring workflows each pool runs. */
const POOL_SCHEDULES: Record<WorkerPool, ((config: Config) => RecurringWorkflow)[]> = {
  forge: [reconcileSchedule],
  search: [crawlTickSchedule],
  platform: [
    retentionSchedule,
    autoDisconnectSchedule,
    apiKeyExpirySchedule,
    rescoreAllSchedule,
    initiativeDeadlinesSchedule,
    syncTickSchedule,
    platformMetricsSchedule,
  ],
};

/**
 * What the started pools set up in Temporal at each start (every start may do it: it is
 * idempotent): the schedules of their recurring workflows, so a deployment carries its schedule
 * settings; and, for the search pool, the reindex when an index definition changed.
 */
async function preparePools(
  pools: WorkerPool[],
  config: Config,
  dataConverter: ReturnType<typeof encryptedDataConverter>,
  engine: SearchEngine,
): Promise<void> {
  const schedules = pools.flatMap((pool) => POOL_SCHEDULES[pool].map((schedule) => schedule(config)));
  if (!schedules.length && !pools.includes('search')) return;
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter });
    for (const schedule of schedules) await ensureSchedule(client, schedule);
    // The engine may be down at a start: the workers start anyway, and the next start asks again.
    if (pools.includes('search'))
      await startReindexIfBehind(client, engine).catch((err: Error) =>
        Runtime.instance().logger.warn('could not check the search index versions', { error: err.message }),
      );
  } finally {
    await connection.close();
  }
}

/**
 * Creates one worker per requested pool in this process, sharing one connection and one
 * workflow bundle (bundling is the slow part of a worker's start).
 */
export async function createPoolWorkers(
  pools: WorkerPool[],
  config: Config,
  deps: Omit<ActivityDeps, 'keyring' | 'temporal'>,
  workflowBundle?: { code: string },
): Promise<PoolWorkers> {
  // Before connecting: a missing or malformed key stops the start.
  const keyring = createKeyring(config);
  const dataConverter = encryptedDataConverter(new EncryptionCodec(keyring));
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // The activities' own client (the forge pool's reconciliation), connected on first use.
  const clientConnection = Connection.lazy({ address: config.temporal.address });
  const temporal = new Client({ connection: clientConnection, namespace: config.temporal.namespace, dataConverter });
  await preparePools(pools, config, dataConverter, deps.search);
  const bundle =
    workflowBundle ??
    // webpack's build report is noise at every start; keep only what needs attention.
    (await bundleWorkflows(
      new DefaultLogger('WARN', (entry) => Runtime.instance().logger.log(entry.level, entry.message, entry.meta)),
    ));
  const workers = await Promise.all(
    pools.map((pool) =>
      Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: TASK_QUEUES[pool],
        workflowBundle: bundle,
        dataConverter,
        activities: activitiesFor(pool, { ...deps, keyring, temporal }),
      }),
    ),
  );
  return {
    async run() {
      try {
        await Promise.all(workers.map((worker) => worker.run()));
      } finally {
        await Promise.all([connection.close(), clientConnection.close()]);
      }
    },
    shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    },
    temporal,
  };
}
