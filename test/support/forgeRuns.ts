import { randomUUID } from 'node:crypto';
import { callApi, type Reply, type TestApi } from './harness';
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
    logMessages: async (runId: string): Promise<string[]> =>
      (await call('GET', `/forge/runs/${runId}/logs`)).body.lines.map((line: { message: string }) => line.message),
  };
}
