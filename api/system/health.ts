import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../deps';
import { shipyardSearchAttributes, workflowId } from '../../core/searchAttributes';
import { TASK_QUEUES, WORKER_POOLS, type WorkerPool } from '../../core/taskQueues';
import type { workerProbe } from '../../workflows/probe';
import { poolUsage, probeDatabase } from './databaseChecks';
import type { PoolHealth, ServiceHealth, SystemHealth } from './schemas';

const SERVICE_TIMEOUT_MS = 2_000;
// A pool with no worker polling never picks the probe up; the server then times it out and
// discards it, so a pool that comes back later does not run stale probes.
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Times one check under a deadline. On timeout the work is aborted (so client retries stop),
 * and any failure is "down" with its message, never a thrown error.
 */
async function timed<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<ServiceHealth & { value?: T }> {
  const started = performance.now();
  const latency = () => Math.round((performance.now() - started) * 10) / 10;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    const value = await Promise.race([work(controller.signal), deadline]);
    return { status: 'up', latency_ms: latency(), value };
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    return { status: 'down', latency_ms: latency(), error: cause ?? (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

const strip = <T extends { value?: unknown }>({ value: _value, ...health }: T) => health;

/** A worker pool is up when it completes a probe workflow: API → Temporal → worker → database. */
async function probePool(deps: AppDeps, pool: WorkerPool): Promise<PoolHealth> {
  const taskQueue = TASK_QUEUES[pool];
  const result = await timed(
    (signal) =>
      deps.temporal.connection.withAbortSignal(signal, () =>
        deps.temporal.workflow.execute<typeof workerProbe>('workerProbe', {
          taskQueue,
          workflowId: workflowId('worker-probe', randomUUID()),
          args: [pool],
          workflowExecutionTimeout: PROBE_TIMEOUT_MS,
          typedSearchAttributes: shipyardSearchAttributes({ kind: 'worker-probe' }),
        }),
      ),
    PROBE_TIMEOUT_MS + SERVICE_TIMEOUT_MS,
  );
  return { ...strip(result), task_queue: taskQueue, worker_identity: result.value?.worker_identity };
}

/** The three services the API talks to, each up or down (with why), within SERVICE_TIMEOUT_MS. */
export async function checkServices(deps: AppDeps) {
  const [database, elasticsearch, temporal] = await Promise.all([
    timed((signal) => probeDatabase(deps.config.database.appUrl, signal), SERVICE_TIMEOUT_MS),
    timed((signal) => deps.search.client.cluster.health({ timeout: '1s' }, { signal }), SERVICE_TIMEOUT_MS),
    timed(
      (signal) =>
        deps.temporal.connection.withAbortSignal(signal, () => deps.temporal.workflowService.getSystemInfo({})),
      SERVICE_TIMEOUT_MS,
    ),
  ]);
  return { database, elasticsearch, temporal };
}

/** `operator`: the caller may see the Temporal Web UI's address, which shows every tenant's runs. */
export async function checkSystem(deps: AppDeps, operator: boolean): Promise<SystemHealth> {
  // As the request found it: the checks below take no connection from it.
  const pool = poolUsage(deps.db);
  const { database, elasticsearch, temporal } = await checkServices(deps);
  const pools = await Promise.all(
    WORKER_POOLS.map(async (pool): Promise<[WorkerPool, PoolHealth]> => {
      if (temporal.status === 'down') {
        return [
          pool,
          { status: 'down', latency_ms: 0, task_queue: TASK_QUEUES[pool], error: 'temporal is unreachable' },
        ];
      }
      return [pool, await probePool(deps, pool)];
    }),
  );
  const worker_pools = Object.fromEntries(pools) as Record<WorkerPool, PoolHealth>;
  const { outage } = deps.changes;
  const change_listener: SystemHealth['services']['change_listener'] = outage
    ? { status: 'down', down_since: outage.since.toISOString(), error: outage.error }
    : { status: deps.changes.listening ? 'up' : 'down' };
  const everything = [database, elasticsearch, temporal, change_listener, ...Object.values(worker_pools)];
  return {
    status: everything.every((check) => check.status === 'up') ? 'ok' : 'degraded',
    checked_at: new Date().toISOString(),
    services: {
      database: { ...strip(database), pool },
      elasticsearch: strip(elasticsearch),
      temporal: { ...strip(temporal), ...(operator && { ui_url: deps.config.temporal.uiUrl }) },
      change_listener,
    },
    worker_pools,
  };
}
