import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createKeyring } from '../../core/crypto/keyring';
import { EncryptionCodec, encryptedDataConverter } from '../../core/crypto/payloadCodec';
import { testConfig } from './harness';
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
