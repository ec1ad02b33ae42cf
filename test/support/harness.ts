import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { answerClientErrors } from '../../api/http/clientErrors';
import { loadConfig, type Config } from '../../core/config';
import { closeDeps, createDeps, type AppDeps } from '../../api/deps';
import type { RouteDefinition } from '../../api/http/route';
import { issueDevToken, type DevTokenRequest } from '../../scripts/cli/devToken';
import { createWorkerClients } from '../../workers/clients';
import { startScorecardWaker } from '../../workers/notifiedLoops';
import { createPoolWorkers, installTemporalLogging } from '../../workers/pools';
import type { WorkerPool } from '../../core/taskQueues';
import { apiRoutes } from '../../api/routes';
import { withApiReference } from '../../api/openapi/routes';
import { responseContract } from './responseContract';
import { applyTestEnv, WORKFLOW_BUNDLE_PATH } from './testEnv';

applyTestEnv();
// Worker and SDK logs would drown the test output; failures surface through assertions.
installTemporalLogging(pino({ level: 'silent' }));

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig(), ...overrides };
}

export function testDeps(config: Config = testConfig()): Promise<AppDeps> {
  return createDeps(config, pino({ level: 'silent' }));
}

export interface TestApi {
  url: string;
  deps: AppDeps;
  close(): Promise<void>;
}

/**
 * The real app on a real socket (port 0), with real clients behind it. Every JSON response is
 * checked against its route's declared schema; `close()` fails on any that did not match.
 */
export async function startApi(options: { deps?: AppDeps; routes?: RouteDefinition[] } = {}): Promise<TestApi> {
  const deps = options.deps ?? (await testDeps());
  const app = buildApp(deps, options.routes);
  const contract = responseContract(withApiReference(options.routes ?? apiRoutes));
  app.middleware.unshift(contract.middleware);
  const server: Server = createServer(app.callback());
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await closeDeps(deps);
      contract.assertKept();
    },
  };
}

export interface TestWorkers {
  stop(): Promise<void>;
}

/**
 * Real Temporal workers for the given pools, in this process, on the test namespace (with
 * `config`'s settings); with `scorecardWaker`, the platform pool's waker beside them, as
 * workers/main.ts runs it (opt-in: it would wake every tenant other suites left queued).
 */
export async function startWorkers(
  pools: WorkerPool[],
  { config = testConfig(), scorecardWaker = false }: { config?: Config; scorecardWaker?: boolean } = {},
): Promise<TestWorkers> {
  const clients = createWorkerClients(config, { poolMax: 4 });
  const code = await readFile(WORKFLOW_BUNDLE_PATH, 'utf8');
  const workers = await createPoolWorkers(pools, config, clients, { code });
  const running = workers.run();
  const waker = scorecardWaker
    ? await startScorecardWaker(config, clients, workers.temporal, pino({ level: 'silent' }))
    : undefined;
  return {
    async stop() {
      await waker?.stop();
      workers.shutdown();
      await running;
      await clients.close();
    },
  };
}

/** A response body as loosely typed JSON: tests assert on its shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const jsonOf = (res: Response): Promise<any> => res.json();

/** A session token from the dev CLI's code path: the tenant and user are created as needed. */
export async function sessionToken(
  request: DevTokenRequest,
): Promise<{ token: string; tenantId: string; userId: string }> {
  return issueDevToken(testConfig(), request);
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A JSON reply: the status and the parsed body (null when there is none, as for a 204). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Reply = { status: number; body: any };

/** One JSON call to `api`'s /api/v1 as the bearer of `token`. */
export async function callApi(
  api: TestApi,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const res = await fetch(`${api.url}/api/v1${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
