import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { apiRoutes } from '../../api/routes';
import { callApi, sessionToken, startApi } from '../support/harness';
import { startTarget, type Target } from '../support/httpTarget';
import { launch, processesCarrying, stop, until } from '../support/processes';

// Durability: a forge worker process killed mid-action, and an API restarted mid-run, lose
// nothing: another worker picks the action up again and the run completes. A script is run
// again too (at least once), and the copy the dead worker left behind dies at its time limit.
let target: Target;
let token: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  target = await startTarget();
  token = (
    await sessionToken({ tenant: `durable-${randomUUID().slice(0, 8)}`, email: 'ops@durable.test', roles: ['admin'] })
  ).token;
});
afterAll(async () => {
  for (const worker of workers) await stop(worker, 'SIGKILL');
  await target.close();
});

test('killing the forge worker mid-action and restarting the API: the run still completes', async () => {
  target.delayMs = 4000;
  let api = await startApi({ routes: apiRoutes });
  workers.push(launch('workers/main.ts', ['forge']));
  const { body: mold } = await callApi(api, token, 'POST', '/forge/molds', {
    slug: `durable-${randomUUID().slice(0, 6)}`,
    name: 'durable',
    actions: [
      { name: 'slow-call', type: 'api-call', config: { url: `${target.url}/slow`, timeout_seconds: 20 } },
      { name: 'gate', type: 'approval', approvers: { allow_self_approval: true } },
      { name: 'finish', type: 'script', config: { script: 'echo finished' } },
    ],
  });
  const { body: run } = await callApi(api, token, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {} });

  // The first worker has the HTTP call in flight: kill it without any chance to clean up.
  await until('the action in flight', 60, async () => (target.requests.length >= 1 ? true : undefined));
  await stop(workers[0], 'SIGKILL');
  target.delayMs = 0;
  workers.push(launch('workers/main.ts', ['forge']));

  // Temporal notices the missing heartbeats and retries the action on the new worker.
  await until('the approval gate', 90, async () =>
    (await callApi(api, token, 'GET', `/forge/runs/${run.id}`)).body.status === 'awaiting_approval' ? true : undefined,
  );
  expect(target.requests.length).toBeGreaterThanOrEqual(2);

  // A new API instance sees the same run and can decide on it.
  await api.close();
  api = await startApi({ routes: apiRoutes });
  try {
    await callApi(api, token, 'POST', `/forge/runs/${run.id}/approve`);
    const done = await until('completion', 60, async () => {
      const { body: current } = await callApi(api, token, 'GET', `/forge/runs/${run.id}`);
      return ['completed', 'failed', 'cancelled'].includes(current.status) ? current : undefined;
    });
    expect(done.status).toBe('completed');
    expect(done.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed', 'completed']);
  } finally {
    await api.close();
  }
}, 180_000);

test('killing the forge worker mid-script: the script runs again on another worker, and the orphaned copy is killed at its time limit', async () => {
  // One worker at a time, so the one killed is the one running the script.
  for (const worker of workers) await stop(worker, 'SIGKILL');
  const api = await startApi({ routes: apiRoutes });
  workers.push(launch('workers/main.ts', ['forge']));
  const marker = randomUUID();
  try {
    const { body: mold } = await callApi(api, token, 'POST', '/forge/molds', {
      slug: `durable-script-${randomUUID().slice(0, 6)}`,
      name: 'durable script',
      parameters: [{ name: 'marker', type: 'string', required: true }],
      // A sandboxed copy leaves nothing on the host for the next one to find: both copies run
      // into the time limit, so the run fails, after two starts.
      actions: [{ name: 'work', type: 'script', config: { script: 'echo started; sleep 60', timeout_seconds: 15 } }],
    });
    const { body: run } = await callApi(api, token, 'POST', '/forge/runs', {
      mold_slug: mold.slug,
      parameters: { marker },
    });
    const logs = async () =>
      (await callApi(api, token, 'GET', `/forge/runs/${run.id}/logs`)).body.lines.map(
        (l: { message: string }) => l.message,
      ) as string[];
    await until('the script running', 60, async () => ((await logs()).includes('started') ? true : undefined));
    // timeout, bwrap, its pid 1 inside and the shell: found by the variable only they carry.
    const firstCopy = processesCarrying(`PARAM_MARKER=${marker}`);
    expect(firstCopy.length).toBeGreaterThanOrEqual(4);
    await stop(workers.at(-1)!, 'SIGKILL');
    workers.push(launch('workers/main.ts', ['forge']));

    const done = await until('completion', 90, async () => {
      const { body: current } = await callApi(api, token, 'GET', `/forge/runs/${run.id}`);
      return ['completed', 'failed', 'cancelled'].includes(current.status) ? current : undefined;
    });
    expect(done.status).toBe('failed');
    expect(done.steps[0].error).toBe('script exceeded its time limit (15 s)');
    expect((await logs()).filter((m) => m === 'started')).toHaveLength(2);
    expect(await logs()).toContain('work: starting script (attempt 2)');
    // No worker is left to kill the first copy: `timeout` does, well before its 60 s sleep ends.
    await until('the orphaned script gone', 30, async () =>
      firstCopy.every((pid) => !processesCarrying(`PARAM_MARKER=${marker}`).includes(pid)) ? true : undefined,
    );
  } finally {
    await api.close();
  }
}, 180_000);
