import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../api/deps';
import { apiRoutes } from '../../api/routes';
import { insertRun } from '../../core/forge/runStore';
import { forgeWorkflowId } from '../../core/forge/types';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, startWorkers, type Reply, type TestApi, type TestWorkers } from './harness';
import { until } from './processes';

// Molds and runs through the API as one caller: create a mold, start a run, wait for its end,
// read its log. For tests of what runs do rather than of the forge endpoints themselves.

const FINISHED = ['completed', 'failed', 'cancelled'];

const expectStatus = (what: string, res: Reply, status: number) => {
  if (res.status !== status)
    throw new Error(`${what} answered ${res.status}, not ${status}: ${JSON.stringify(res.body)}`);
  return res.body;
};

export function forgeCaller(api: TestApi, token: string) {
  const call = (method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
  return {
    call,
    /** A mold with a fresh slug; `mold` holds the rest (actions, parameters). */
    createMold: async (mold: Record<string, unknown>) =>
      expectStatus(
        'POST /forge/molds',
        await call('POST', '/forge/molds', { slug: `mold-${randomUUID().slice(0, 8)}`, name: 'A mold', ...mold }),
        201,
      ),
    startRun: async (moldSlug: string, parameters: Record<string, unknown> = {}) =>
      expectStatus('POST /forge/runs', await call('POST', '/forge/runs', { mold_slug: moldSlug, parameters }), 201),
    /** Polls the run until it is completed, failed or cancelled; returns it. */
    finished: (runId: string, seconds = 60) =>
      until(`run ${runId} to finish`, seconds, async () => {
        const { body } = await call('GET', `/forge/runs/${runId}`);
        return FINISHED.includes(body.status) ? body : undefined;
      }),
    /** Every line of the run's log (one page of up to 1000). */
    logMessages: async (runId: string): Promise<string[]> =>
      (await call('GET', `/forge/runs/${runId}/logs?limit=1000`)).body.lines.map(
        (line: { message: string }) => line.message,
      ),
  };
}

/** What the forge endpoint suites share: an API, forge workers, a writer and a reader of one tenant. */
export interface ForgeSuite {
  api: TestApi;
  /** Tenant name suffix, unique per suite run: tests derive other tenants from it. */
  run: string;
  writer: string;
  writerTenantId: string;
  /** An editor of the writer's tenant who decides on the writer's runs (a starter may not approve its own). */
  approver: string;
  viewer: string;
}

/**
 * Registers the hooks of a forge endpoint suite: real forge workers in this process, the API on
 * a socket (`startApi`, so every response is checked against its declared schema), and session
 * tokens of an admin (`dev@forge.test`), an editor who approves (`approver@forge.test`) and a viewer of
 * one fresh tenant. `api` lets a suite
 * give the API its own deps (a Temporal client that stalls, for one).
 */
export function useForgeSuite(options: { deps?: () => Promise<AppDeps> } = {}) {
  const suite = { run: randomUUID().slice(0, 8) } as ForgeSuite;
  let workers: TestWorkers;
  beforeAll(async () => {
    workers = await startWorkers(['forge']);
    suite.api = await startApi({ routes: apiRoutes, deps: await options.deps?.() });
    ({ token: suite.writer, tenantId: suite.writerTenantId } = await sessionToken({
      tenant: `forge-${suite.run}`,
      email: 'dev@forge.test',
      roles: ['admin'],
    }));
    suite.approver = (
      await sessionToken({ tenant: `forge-${suite.run}`, email: 'approver@forge.test', roles: ['editor'] })
    ).token;
    suite.viewer = (
      await sessionToken({ tenant: `forge-${suite.run}`, email: 'reader@forge.test', roles: ['viewer'] })
    ).token;
  }, 60_000);
  afterAll(async () => {
    await suite.api?.close();
    await workers?.stop();
  }, 30_000);

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callApi(suite.api, token, method, path, body);
  const asWriter = () => forgeCaller(suite.api, suite.writer);

  const helpers = {
    call,
    createMold: (mold: Record<string, unknown>) => asWriter().createMold(mold),
    startRun: (moldSlug: string, parameters: Record<string, unknown> = {}) => asWriter().startRun(moldSlug, parameters),
    logMessages: (runId: string) => asWriter().logMessages(runId),

    /** A run stored directly, with no workflow behind it, so nothing but the test writes to it. */
    async storeRunWithoutWorkflow(steps: Parameters<typeof insertRun>[1]['steps'] = []): Promise<string> {
      const mold = await helpers.createMold({});
      const runId = randomUUID();
      await withTenant(suite.api.deps.db, suite.writerTenantId, (trx) =>
        insertRun(trx, {
          id: runId,
          tenantId: suite.writerTenantId,
          moldId: mold.id,
          moldSlug: mold.slug,
          moldVersion: 1,
          moldSnapshot: {},
          parameters: {},
          startedBy: 'dev@forge.test',
          workflowId: forgeWorkflowId(runId),
          steps,
        }),
      );
      return runId;
    },

    /** Polls the run's log until a line matches, while the run goes on; returns the match. */
    waitForLog: (runId: string, pattern: RegExp, seconds = 30): Promise<RegExpExecArray> =>
      until(`a log line of run ${runId} matching ${pattern}`, seconds, async () => {
        for (const message of await helpers.logMessages(runId)) {
          const match = pattern.exec(message);
          if (match) return match;
        }
        return undefined;
      }),

    /** Waits until the run waits for approval of the step at `position`. */
    waitForGate: (runId: string, position: number) =>
      until(`run ${runId} waiting at step ${position}`, 30, async () => {
        const { body } = await call(suite.writer, 'GET', `/forge/runs/${runId}`);
        return body.status === 'awaiting_approval' && body.steps[position].status === 'awaiting_approval'
          ? true
          : undefined;
      }),

    /** Waits until the run reads one of `statuses`; returns the run. */
    waitForStatus: (runId: string, statuses: string[], seconds = 30) =>
      until(`run ${runId} in ${statuses.join('/')}`, seconds, async () => {
        const { body } = await call(suite.writer, 'GET', `/forge/runs/${runId}`);
        return statuses.includes(body.status) ? body : undefined;
      }),
  };
  return { suite, ...helpers };
}
