import { createHash, timingSafeEqual } from 'node:crypto';
import Koa, { type Middleware } from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { droppedLogLines } from '../../core/logging';
import { ApiError } from '../../core/errors';
import type { AppDeps } from '../deps';
import { errorHandler } from '../http/errorHandler';
import { operatorEndpoints } from '../http/operatorEndpoints';
import { RequestRecorder, requestContext } from '../http/requestContext';
import { poolUsage } from '../system/databaseChecks';
import { collectProcessMetrics, processRegistry } from './registry';

export const METRICS_PATH = '/metrics';

type PoolStat = 'used' | 'free' | 'pending' | 'max';
const POOL_STATS: PoolStat[] = ['used', 'free', 'pending', 'max'];
const POOL_HELP: Record<PoolStat, string> = {
  used: 'Database connections checked out of the pool',
  free: 'Idle database connections in the pool',
  pending: 'Requests waiting for a database connection',
  max: 'Largest size of the pool',
};

/** The app's Knex pools, read when scraped (no timer, nothing on the request path). */
function poolRegistry(pools: Record<string, Knex>): Registry {
  const registry = new Registry();
  for (const stat of POOL_STATS) {
    new Gauge({
      name: `shipyard_db_pool_${stat}`,
      help: POOL_HELP[stat],
      labelNames: ['pool'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [pool, db] of Object.entries(pools)) {
          const usage = poolUsage(db);
          if (usage) this.set({ pool }, usage[stat]);
        }
      },
    });
  }
  return registry;
}

/** The process's log destination, read when scraped. */
function logRegistry(logger: Logger): Registry {
  const registry = new Registry();
  new Counter({
    name: 'shipyard_log_lines_dropped_total',
    help: 'Log lines dropped because the reader of stdout fell behind (64 Mi characters pending)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(droppedLogLines(logger));
    },
  });
  return registry;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * `Authorization: Bearer <token>` against the configured token, in constant time: both sides
 * are hashed first, so neither the content nor the length of the token leaks through timing.
 */
function tokenMatches(expected: Buffer, authorization: string): boolean {
  const given = /^Bearer (\S+)$/.exec(authorization)?.[1] ?? '';
  return timingSafeEqual(digest(given), expected);
}

/**
 * GET /metrics in Prometheus text format: this process's request, cache and process metrics,
 * `deps`' pool gauges and the log lines its destination dropped. With `config.metrics.token`,
 * only for its bearer; anyone else gets the one 401 envelope.
 */
export function metricsHandler(deps: AppDeps): Middleware {
  collectProcessMetrics();
  const registry = Registry.merge([
    processRegistry,
    poolRegistry({ app: deps.db, system: deps.system }),
    logRegistry(deps.logger),
  ]);
  const expected = deps.config.metrics.token === undefined ? undefined : digest(deps.config.metrics.token);
  return async (ctx) => {
    if (expected && !tokenMatches(expected, ctx.get('authorization'))) {
      throw new ApiError('UNAUTHORIZED', 'Authentication required', [], { 'WWW-Authenticate': 'Bearer' });
    }
    ctx.type = registry.contentType;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await registry.metrics();
  };
}

/**
 * The separate listener's app (`SHIPYARD_METRICS_PORT`): GET /metrics and nothing else, with
 * the API's request ids and error envelope.
 */
export function buildMetricsApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.use(requestContext(new RequestRecorder(deps.logger)));
  app.use(errorHandler());
  app.use(operatorEndpoints({ [METRICS_PATH]: metricsHandler(deps) }));
  return app;
}
