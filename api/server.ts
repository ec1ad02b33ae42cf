import { buildApp } from './app';
import { createApiServer } from './http/connections';
import { loadConfig } from '../core/config';
import { createLogger, flushLog } from '../core/logging';
import { closeDeps, createDeps, type AppDeps } from './deps';
import { buildMetricsApp } from './metrics/endpoint';
import { checkServices } from './system/health';

/**
 * Runs the API until SIGINT/SIGTERM, then stops taking connections, lets in-flight requests
 * finish (up to SHUTDOWN_TIMEOUT_MS) and closes the clients.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  const deps = await createDeps(config, logger);
  const server = createApiServer(buildApp(deps).callback(), config.limits.connections);
  server.listen(config.port, config.host, () => logger.info({ port: config.port, host: config.host }, 'api listening'));
  void warnOfServicesDown(deps);
  // SHIPYARD_METRICS_PORT: /metrics on a listener of its own (e.g. loopback only), not on PORT.
  const { port: metricsPort, host: metricsHost } = config.metrics;
  const metricsServer =
    metricsPort === undefined
      ? undefined
      : createApiServer(buildMetricsApp(deps).callback(), config.limits.connections);
  metricsServer?.listen(metricsPort, metricsHost, () =>
    logger.info({ port: metricsPort, host: metricsHost }, 'metrics listening'),
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api shutting down');
    deps.stopping.abort();
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
    // Scrapes are short and replayable: the metrics listener closes at once.
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    server.close(async () => {
      clearTimeout(force);
      await closeDeps(deps);
      logger.info('api stopped');
      await flushLog(logger);
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Says at start which service the API cannot reach, and how to bring the local ones up. The API
 * runs on regardless: its clients reconnect, and it serves once the service is back.
 */
async function warnOfServicesDown(deps: AppDeps): Promise<void> {
  const { database, elasticsearch, temporal } = deps.config;
  const addresses = {
    database: new URL(database.appUrl).host,
    elasticsearch: elasticsearch.url,
    temporal: temporal.address,
  };
  const checks = await checkServices(deps);
  for (const service of ['database', 'elasticsearch', 'temporal'] as const) {
    const { status, error } = checks[service];
    if (status === 'up') continue;
    deps.logger.warn(
      { service, address: addresses[service], error },
      `${service} at ${addresses[service]} does not answer: start the local services with ` +
        '`npm run services up`; requests that need it fail until it is back',
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
