import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import pino from 'pino';
import { httpAction } from '../../activities/forge/apiCall';
import { buildApp } from '../../api/app';
import { loadConfig } from '../../core/config';
import { MAX_INT_SETTING } from '../../core/envValues';
import { createEgressClient } from '../../core/egress/egressClient';
import { parseEgressAllow } from '../../core/egress/egressRules';
import { closeDeps, createDeps } from '../../api/deps';
import { apiRoutes } from '../../api/routes';
import { encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { createWorkerClients } from '../../workers/clients';
import { createPoolWorkers, installTemporalLogging } from '../../workers/pools';
import { issueDevToken } from '../cli/devToken';
import type { benchFloor, FloorActivities } from './floorWorkflow';
import { benchApi } from './apiClient';
import { ONE_TENANT_LOAD, percentile } from './load';

// `npm run bench:forge`: what forge adds to a run. A mold of ACTIONS no-op api-call actions is
// run through the API, from POST /forge/runs until the run's log stream (follow=true) sends its
// `end` event, as a user watching the run sees it end; the floor is the same activities in a
// bare workflow (scripts/bench/floorWorkflow.ts). Runs are sequential, so this is latency, not
// queueing; the API, both workers and the no-op target share this process.
const RUNS = Number(process.env.BENCH_RUNS ?? 60);
// Pairs before the measured ones (JIT, connections, workflow caches). Ours runs far more code of
// our own (routes, validation, knex) than the floor does, and V8 optimizes code only after many
// calls: alternating passes read 1.18×, 1.17×, 1.21×, 1.15× after 3 pairs and 1.13×, 1.15×,
// 1.14×, 1.13× after 30.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const ACTIONS = 3;
const RUN_DEADLINE_MS = 30_000;
const FLOOR_QUEUE = 'bench-floor';
// The no-op target is a local fake like the tests': on a loopback address the egress guard is
// told to allow, as an operator would allow an internal service (127.0.0.1 stays refused).
const TARGET_HOST = '127.0.0.77';

async function listen(server: Server, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  // Keep-alive sockets (the client's agent) would otherwise hold the process open.
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function main(): Promise<void> {
  // SDK and bundler logs would break up the table; failures surface as thrown errors.
  installTemporalLogging(pino({ level: 'silent' }));
  const loaded = loadConfig({ ...process.env, ...ONE_TENANT_LOAD });
  // Runs start back to back from one tenant: latency, not fair sharing, so no start rate applies.
  const config = {
    ...loaded,
    egressAllow: [...loaded.egressAllow, TARGET_HOST],
    forge: { ...loaded.forge, runStartsPerMinute: MAX_INT_SETTING },
  };
  const deps = await createDeps(config, pino({ level: 'silent' }));
  // The worker gets its own pool, as in workers/main.ts, so it does not wait on the API's.
  const workerClients = createWorkerClients(config);
  const forgeWorkers = await createPoolWorkers(['forge'], config, workerClients);
  const forgeRunning = forgeWorkers.run();

  const floorConnection = await NativeConnection.connect({ address: config.temporal.address });
  const egress = createEgressClient(parseEgressAllow(config.egressAllow));
  const floorWorker = await Worker.create({
    connection: floorConnection,
    namespace: config.temporal.namespace,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: require.resolve('./floorWorkflow'),
    // Encrypted like ours, so the floor pays the same codec cost (and reads the API client's payloads).
    dataConverter: encryptedDataConverter(deps.payloadCodec),
    activities: {
      httpGet: (url: string) =>
        httpAction(
          egress,
          { method: 'GET', url, timeoutSeconds: 30 },
          {},
          config.forgeTemplates,
          Context.current().cancellationSignal,
        ),
    } satisfies FloorActivities,
  });
  const floorRunning = floorWorker.run();

  const target = createServer((_req, res) => {
    res.statusCode = 204;
    res.end();
  });
  const api = createServer(buildApp(deps, apiRoutes).callback());
  try {
    const targetUrl = await listen(target, TARGET_HOST);
    const base = `${await listen(api)}/api/v1`;
    const { token } = await issueDevToken(config, {
      tenant: 'bench-forge',
      email: 'bench@bench.test',
      roles: ['admin'],
    });
    const { call, streamedEnd } = benchApi(base, token, RUN_DEADLINE_MS);

    const stamp = Date.now();
    const moldSlug = `bench-forge-${stamp}`;
    const urls = Array.from({ length: ACTIONS }, (_, i) => `${targetUrl}/noop-${i + 1}`);
    await call('POST', '/forge/molds', {
      slug: moldSlug,
      name: 'bench: no-op actions',
      actions: urls.map((url, i) => ({ name: `noop-${i + 1}`, type: 'api-call', config: { url, method: 'GET' } })),
    });

    const ours = async () => {
      const started = performance.now();
      const { id } = await call('POST', '/forge/runs', { mold_slug: moldSlug, parameters: {} });
      const status = await streamedEnd(id);
      if (status !== 'completed') throw new Error(`run ${id} ended ${status}`);
      return performance.now() - started;
    };
    let floorRuns = 0;
    const floor = async () => {
      const started = performance.now();
      await deps.temporal.workflow.execute<typeof benchFloor>('benchFloor', {
        taskQueue: FLOOR_QUEUE,
        workflowId: `bench-floor-${stamp}-${floorRuns++}`,
        args: [urls],
        workflowExecutionTimeout: RUN_DEADLINE_MS,
      });
      return performance.now() - started;
    };

    // Warm-up, then the two alternate so drift hits both alike.
    for (let i = 0; i < WARMUP; i++) {
      await ours();
      await floor();
    }
    const results = { ours: [] as number[], floor: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      results.ours.push(await ours());
      results.floor.push(await floor());
    }

    console.log(
      `forge run latency: mold of ${ACTIONS} no-op api-call actions (target answers 204), ${RUNS} runs each after ${WARMUP} warm-up, sequential, one process`,
    );
    console.log('ours: POST /forge/runs until GET /forge/runs/{id}/logs?follow=true sends its end event');
    console.log(`floor: client.workflow.execute of a bare workflow running the same ${ACTIONS} httpAction activities`);
    console.log('case                 median_ms  p95_ms  mean_ms  min_ms  max_ms');
    const row = (name: string, sorted: number[]) => {
      const mean = sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length;
      const cells = [percentile(sorted, 50), percentile(sorted, 95), mean, sorted[0], sorted[sorted.length - 1]].map(
        (ms) => ms.toFixed(1),
      );
      console.log(
        `${name.padEnd(20)} ${cells[0].padStart(9)} ${cells[1].padStart(7)} ${cells[2].padStart(8)} ${cells[3].padStart(7)} ${cells[4].padStart(7)}`,
      );
    };
    const sortedOurs = results.ours.sort((a, b) => a - b);
    const sortedFloor = results.floor.sort((a, b) => a - b);
    row('forge run (API)', sortedOurs);
    row('floor (bare wf)', sortedFloor);
    const over = (p: number) => {
      const ms = percentile(sortedOurs, p) - percentile(sortedFloor, p);
      return `${ms < 0 ? '' : '+'}${ms.toFixed(1)} ms`;
    };
    console.log(`overhead (ours - floor): median ${over(50)}, p95 ${over(95)}`);
    await call('DELETE', `/forge/molds/${moldSlug}`);
  } finally {
    // Workers first: an activity still in flight (after an error) needs the target and the database.
    forgeWorkers.shutdown();
    floorWorker.shutdown();
    await Promise.allSettled([forgeRunning, floorRunning]);
    await Promise.all([close(api), close(target)]);
    await Promise.allSettled([floorConnection.close(), workerClients.close(), closeDeps(deps)]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
