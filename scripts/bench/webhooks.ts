import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NativeConnection, Worker } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig, type Config } from '../../core/config';
import { createKeyring } from '../../core/crypto/keyring';
import { EncryptionCodec, encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { insertIntegration } from '../../core/integrations/store';
import { recordEvents } from '../../core/webhooks/events';
import { deliveryBody, deliveryHeaders, generateSecret } from '../../core/webhooks/rules';
import { insertWebhook } from '../../core/webhooks/store';
import { withTenant } from '../../db/tenancy';
import { createWorkerClients } from '../../workers/clients';
import { createPoolWorkers, installTemporalLogging } from '../../workers/pools';
import { startWebhookDispatch } from '../../workers/notifiedLoops';
import { issueDevToken } from '../cli/devToken';
import { percentile } from './load';
import type { benchWebhookFloor, WebhookFloorActivities } from './webhookFloorWorkflow';

// `npm run bench:webhooks`: outbound webhook deliveries through the real pipeline (an event
// committed in a tenant transaction → the platform workers' dispatcher → one webhookDelivery
// workflow per delivery → a signed POST through the egress guard → a local receiver), beside
// two floors at the same concurrency (as many at once as one webhook may have under way,
// SHIPYARD_WEBHOOK_IN_FLIGHT_PER_WEBHOOK): the same signed POSTs sent straight to the receiver,
// and the same POSTs each in a bare workflow of one activity (scripts/bench/webhookFloorWorkflow.ts:
// what Temporal itself costs a durable delivery here). Each round: a burst of BURST events
// committed in one transaction (throughput: until the last arrives), the workflow floor, then
// the POST floor twice (the second is the noise); medians over ROUNDS rounds after a warm-up.
// Then LATENCY_EVENTS single events one after the other: from each commit to its arrival.
//
// Goals: a delivery is a durable workflow, so a socket write is no fair bar for it; the bare
// workflow is: a burst at ≥ 0.5× the workflow floor's deliveries/s (ours adds the dispatcher and
// two database transactions per attempt); and, as a webhook consumer sees it, commit → arrival
// p50 < 250 ms and p95 < 500 ms.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 300);
const LATENCY_EVENTS = Number(process.env.BENCH_WEBHOOK_LATENCY_EVENTS ?? 40);
const P50_GOAL_MS = 250;
const P95_GOAL_MS = 500;
const RATIO_GOAL = 0.5;
const FLOOR_QUEUE = 'bench-webhook-floor';
const RECEIVER_HOST = '127.0.0.77';
const TENANT = 'bench-webhooks';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A receiver that notes when each event's delivery arrived (by the bench marker in its data). */
async function startReceiver(): Promise<{ url: string; arrivals: Map<string, number>; server: Server }> {
  const arrivals = new Map<string, number>();
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const marker = (JSON.parse(body) as { data: { marker: string } }).data.marker;
    if (!arrivals.has(marker)) arrivals.set(marker, performance.now());
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, RECEIVER_HOST, resolve));
  return { url: `http://${RECEIVER_HOST}:${(server.address() as AddressInfo).port}/hook`, arrivals, server };
}

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

async function main(): Promise<void> {
  // SDK and bundler logs would break up the table; failures surface as thrown errors.
  installTemporalLogging(pino({ level: 'silent' }));
  const loaded = loadConfig();
  // The receiver is local: the egress guard lets its address through, as the tests' fakes.
  const config: Config = { ...loaded, egressAllow: [...loaded.egressAllow, RECEIVER_HOST] };
  const { tenantId } = await issueDevToken(config, { tenant: TENANT, email: 'bench@bench.test', roles: ['admin'] });
  const receiver = await startReceiver();
  const clients = createWorkerClients(config, { poolMax: 8 });
  const keyring = createKeyring(config);
  const inTenant = <T>(work: Parameters<typeof withTenant<T>>[2]) => withTenant(clients.db, tenantId, work);
  const secret = generateSecret();
  // One webhook of the tenant, subscribed to entity.created, pointing at the receiver.
  await inTenant(async (trx) => {
    await trx('webhooks').delete();
    await trx('integrations').where({ name: 'bench webhooks' }).delete();
    const integration = await insertIntegration(trx, keyring, tenantId, {
      name: 'bench webhooks',
      type: 'custom',
      config: {},
    });
    await insertWebhook(trx, keyring, {
      tenantId,
      integrationId: integration.id,
      url: receiver.url,
      events: ['entity.created'],
      secret,
      active: true,
    });
  });
  const workers = await createPoolWorkers(['platform'], config, clients);
  const running = workers.run();
  const dispatch = await startWebhookDispatch(config, clients, workers.temporal, pino({ level: 'silent' }));
  const signedPost = async (marker: string, url = receiver.url) => {
    const body = deliveryBody({ kind: 'entity.created', created_at: new Date(), data: { marker } });
    return { url, body, headers: deliveryHeaders(secret, `msg_${marker}`, body, new Date()) };
  };
  const floorConnection = await NativeConnection.connect({ address: config.temporal.address });
  const floorWorker = await Worker.create({
    connection: floorConnection,
    namespace: config.temporal.namespace,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: require.resolve('./webhookFloorWorkflow'),
    // Encrypted like ours, so the floor pays the same codec cost.
    dataConverter: encryptedDataConverter(new EncryptionCodec(keyring)),
    activities: {
      async postSigned(marker: string) {
        const { url, body, headers } = await signedPost(marker);
        await clients.egress.request({ method: 'POST', url, headers, body, timeoutMs: 10_000, maxBodyBytes: 1024 });
      },
    } satisfies WebhookFloorActivities,
  });
  const floorRunning = floorWorker.run();
  let sequence = 0;
  const markers = (count: number) => Array.from({ length: count }, () => `m${sequence++}`);

  /** Ours: `count` events committed in one transaction; seconds until the last has arrived. */
  const burst = async (count: number): Promise<number> => {
    const batch = markers(count);
    await inTenant((trx) =>
      recordEvents(
        trx,
        tenantId,
        'entity.created',
        batch.map((marker) => ({ marker })),
      ),
    );
    const committed = performance.now();
    await waitFor(() => batch.every((marker) => receiver.arrivals.has(marker)));
    return (Math.max(...batch.map((marker) => receiver.arrivals.get(marker)!)) - committed) / 1000;
  };
  /** `send` for each of `count` markers, as many at once as a webhook may have; seconds for all. */
  const atWebhookConcurrency = async (count: number, send: (marker: string) => Promise<void>) => {
    const batch = markers(count);
    const started = performance.now();
    let next = 0;
    const sender = async () => {
      while (next < batch.length) await send(batch[next++]);
    };
    await Promise.all(Array.from({ length: config.webhooks.inFlightPerWebhook }, sender));
    return (performance.now() - started) / 1000;
  };
  /** The floor: the same signed POSTs, straight to the receiver. */
  const floor = (count: number) =>
    atWebhookConcurrency(count, async (marker) => {
      const { url, body, headers } = await signedPost(marker);
      await (await fetch(url, { method: 'POST', headers, body })).arrayBuffer();
    });
  /**
   * The workflow floor: each POST in a bare workflow of one activity; a slot frees when its POST
   * has arrived, as ours frees one when its delivery is settled (not when the workflow closes).
   */
  const workflowFloor = (count: number) =>
    atWebhookConcurrency(count, async (marker) => {
      await workers.temporal.workflow.start<typeof benchWebhookFloor>('benchWebhookFloor', {
        taskQueue: FLOOR_QUEUE,
        workflowId: `bench-webhook-floor-${marker}-${Date.now()}`,
        args: [marker],
      });
      await waitFor(() => receiver.arrivals.has(marker));
    });

  try {
    console.log(`warm-up: ${BURST} deliveries`);
    await burst(BURST);
    await workflowFloor(BURST);
    await floor(BURST);
    const figures = { ours: [] as number[], workflow: [] as number[], floor: [] as number[], noise: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.ours.push(await burst(BURST));
      figures.workflow.push(await workflowFloor(BURST));
      figures.floor.push(await floor(BURST));
      figures.noise.push(await floor(BURST));
    }
    const [oursS, workflowS, floorS, noiseS] = [
      median(figures.ours),
      median(figures.workflow),
      median(figures.floor),
      median(figures.noise),
    ];
    const rate = (seconds: number) => BURST / seconds;
    console.log(
      `bench:webhooks — a burst of ${BURST} events committed in one transaction, each delivered to one webhook ` +
        `(dispatcher → webhookDelivery workflow → signed POST through the egress guard), at most ` +
        `${config.webhooks.inFlightPerWebhook} under way at once; floors: the same signed POSTs each in a bare ` +
        `workflow of one activity, and straight to the receiver, as many at once. Medians of ${ROUNDS} rounds.`,
    );
    const row = (name: string, seconds: number) =>
      `${name.padEnd(40)} ${seconds.toFixed(2).padStart(7)} s  ${rate(seconds).toFixed(0).padStart(7)} deliveries/s  ` +
      `${(rate(seconds) / rate(workflowS)).toFixed(2)}× workflow floor  ${(rate(seconds) / rate(floorS)).toFixed(3)}× POST floor`;
    console.log(row('burst through the pipeline', oursS));
    console.log(row('workflow floor: a bare workflow each', workflowS));
    console.log(row('floor: direct POSTs', floorS));
    console.log(row('floor measured again (noise)', noiseS));

    const latencies: number[] = [];
    const floorLatencies: number[] = [];
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const [marker] = markers(1);
      await inTenant((trx) => recordEvents(trx, tenantId, 'entity.created', [{ marker }]));
      const committed = performance.now();
      await waitFor(() => receiver.arrivals.has(marker));
      latencies.push(receiver.arrivals.get(marker)! - committed);
      const [direct] = markers(1);
      const sent = performance.now();
      const body = deliveryBody({ kind: 'entity.created', created_at: new Date(), data: { marker: direct } });
      await (
        await fetch(receiver.url, { method: 'POST', headers: deliveryHeaders(secret, 'msg', body, new Date()), body })
      ).arrayBuffer();
      floorLatencies.push(receiver.arrivals.get(direct)! - sent);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const floorSorted = [...floorLatencies].sort((a, b) => a - b);
    const [p50, p95] = [percentile(sorted, 50), percentile(sorted, 95)];
    console.log(
      `commit → arrival, ${LATENCY_EVENTS} single events one after the other: p50 ${p50.toFixed(0)} ms, ` +
        `p95 ${p95.toFixed(0)} ms (floor, a direct POST: p50 ${percentile(floorSorted, 50).toFixed(1)} ms, ` +
        `p95 ${percentile(floorSorted, 95).toFixed(1)} ms)`,
    );
    const ratio = rate(oursS) / rate(workflowS);
    const noise = Math.abs(1 - noiseS / floorS);
    console.log(
      `goals: burst ≥ ${RATIO_GOAL}× the workflow floor: ${ratio.toFixed(2)}× ` +
        `${ratio + noise >= RATIO_GOAL ? 'met' : 'NOT MET'}; p50 < ${P50_GOAL_MS} ms ` +
        `${p50 < P50_GOAL_MS ? 'met' : 'NOT MET'}; p95 < ${P95_GOAL_MS} ms ${p95 < P95_GOAL_MS ? 'met' : 'NOT MET'}`,
    );
  } finally {
    await dispatch.stop();
    workers.shutdown();
    floorWorker.shutdown();
    await Promise.all([running, floorRunning]);
    await floorConnection.close();
    await clients.close();
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
