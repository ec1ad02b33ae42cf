import { randomUUID } from 'node:crypto';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { useForgeSuite } from '../support/forgeRuns';
import { sessionToken } from '../support/harness';
import { startTarget, type Target } from '../support/httpTarget';
import { until } from '../support/processes';

// Retrying a failed run from the step that failed, and dry runs, through HTTP against real
// workflows: the retry skips what completed (pointing to where it did), takes new values for
// the parameters its remaining steps use, and is refused for a run that did not fail; a dry run
// renders every action as it would run, secrets masked, and stores, starts and calls nothing.

const forge = useForgeSuite();
const { call, createMold, startRun, waitForStatus, logMessages } = forge;
let writer: string;
let stranger: string;
let target: Target;

beforeAll(async () => {
  ({ writer } = forge.suite);
  stranger = (await sessionToken({ tenant: `forge-else-${forge.suite.run}`, email: 'dev@else.test', roles: ['admin'] }))
    .token;
  target = await startTarget();
}, 60_000);
afterAll(() => target?.close());

/** Step 0 echoes; step 1 fails unless `mode` is `ok`; step 2 echoes. */
const flakyMold = () =>
  createMold({
    parameters: [{ name: 'mode', type: 'select', options: ['broken', 'ok'], required: true }],
    actions: [
      { name: 'first', type: 'script', config: { script: 'echo first ran' } },
      { name: 'check', type: 'script', config: { script: 'test "$PARAM_MODE" = ok && echo check passed' } },
      { name: 'last', type: 'script', config: { script: 'echo last ran' } },
    ],
  });

test('retry of a failed run: a new run (retry_of) skips the completed step, pointing to the run it completed in, and starts at the failed one; a retry of a retry points to where the step really ran', async () => {
  const mold = await flakyMold();
  const failed = await waitForStatus((await startRun(mold.slug, { mode: 'broken' })).id, ['failed', 'completed'], 60);
  expect(failed.status).toBe('failed');
  expect(failed.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'failed', 'skipped']);

  // Same parameters: fails again at the same step.
  const again = await call(writer, 'POST', `/forge/runs/${failed.id}/retry`);
  expect(again.status).toBe(201);
  expect(again.body).toEqual(
    expect.objectContaining({ retry_of: failed.id, mold_version: failed.mold_version, parameters: { mode: 'broken' } }),
  );
  const failedAgain = await waitForStatus(again.body.id, ['failed', 'completed'], 60);
  expect(failedAgain.status).toBe('failed');

  // New value for the parameter the remaining steps use: completes.
  const fixed = await call(writer, 'POST', `/forge/runs/${failedAgain.id}/retry`, { parameters: { mode: 'ok' } });
  expect(fixed.status).toBe(201);
  const done = await waitForStatus(fixed.body.id, ['failed', 'completed'], 60);
  expect(done.status).toBe('completed');
  expect(done.retry_of).toBe(failedAgain.id);
  expect(done.parameters).toEqual({ mode: 'ok' });
  expect(
    done.steps.map((s: { name: string; status: string; completed_in: string | null }) => [
      s.name,
      s.status,
      s.completed_in,
    ]),
  ).toEqual([
    ['first', 'skipped', failed.id],
    ['check', 'completed', null],
    ['last', 'completed', null],
  ]);
  const lines = await logMessages(done.id);
  expect(lines).toContain('check passed');
  expect(lines).not.toContain('first ran');

  const refused = await call(writer, 'POST', `/forge/runs/${done.id}/retry`);
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toBe('Only a failed run can be retried: this one is completed');
  const { items } = (await call(writer, 'GET', '/admin/activity?limit=50')).body;
  expect(
    items
      .filter((i: { eventType: string }) => i.eventType === 'forge.run.retry' || i.eventType === 'forge.run.retried')
      .slice(0, 2)
      .map((i: { eventType: string; status: string; targetId: string }) => [i.eventType, i.status, i.targetId]),
  ).toEqual([
    ['forge.run.retry', 'failure', done.id],
    ['forge.run.retried', 'success', done.id],
  ]);
}, 120_000);

test('retry parameters are checked as a start checks them, and may only change what the remaining steps use; a run waiting is a 409; another tenant gets 404', async () => {
  const mold = await createMold({
    parameters: [
      { name: 'service', type: 'string', required: true },
      { name: 'note', type: 'string' },
    ],
    actions: [
      { name: 'hello', type: 'script', config: { script: 'echo "$PARAM_NOTE"' } },
      // 127.0.0.1 is refused by the egress guard: the step fails at once.
      { name: 'call', type: 'api-call', config: { url: 'http://127.0.0.1:9/${{ parameters.service }}' } },
    ],
  });
  const failed = await waitForStatus((await startRun(mold.slug, { service: 'a', note: 'n' })).id, ['failed'], 60);
  const unused = await call(writer, 'POST', `/forge/runs/${failed.id}/retry`, { parameters: { note: 'x' } });
  expect(unused.status).toBe(400);
  expect(unused.body.error.details).toEqual([
    { field: 'parameters.note', message: 'is used by no step the retry runs (they completed in the run retried)' },
  ]);
  const invalid = await call(writer, 'POST', `/forge/runs/${failed.id}/retry`, { parameters: { service: 3, nope: 1 } });
  expect(invalid.status).toBe(400);
  expect(invalid.body.error.details).toEqual(
    expect.arrayContaining([
      { field: 'parameters.nope', message: 'is not a parameter of this mold' },
      { field: 'parameters.service', message: 'must be a string' },
    ]),
  );
  expect((await call(writer, 'POST', `/forge/runs/${failed.id}/retry`, { extra: 1 })).status).toBe(400);
  expect((await call(stranger, 'POST', `/forge/runs/${failed.id}/retry`)).status).toBe(404);

  const gate = await createMold({ actions: [{ name: 'gate', type: 'approval' }] });
  const waiting = await startRun(gate.slug);
  await waitForStatus(waiting.id, ['awaiting_approval']);
  const notFailed = await call(writer, 'POST', `/forge/runs/${waiting.id}/retry`);
  expect(notFailed.status).toBe(409);
  expect(notFailed.body.error.details).toEqual([{ field: 'status', message: 'awaiting_approval' }]);
  expect((await call(writer, 'POST', `/forge/runs/${waiting.id}/cancel`)).status).toBe(200);

  const retried = await call(writer, 'POST', `/forge/runs/${failed.id}/retry`, { parameters: { service: 'b' } });
  expect(retried.status).toBe(201);
  const ended = await waitForStatus(retried.body.id, ['failed', 'completed'], 60);
  expect(ended.steps[0]).toEqual(expect.objectContaining({ status: 'skipped', completed_in: failed.id }));
  expect(ended.steps[1].error).toMatch(/127\.0\.0\.1/);
}, 120_000);

test('a dry run answers 200 with the plan: parameters checked and defaults filled, each config rendered as it would run, secrets masked; no run is stored, no workflow started, no request sent', async () => {
  const mold = await createMold({
    parameters: [
      { name: 'service', type: 'string', required: true },
      { name: 'replicas', type: 'number', default: 2 },
      { name: 'api_token', type: 'string', required: true },
    ],
    actions: [
      {
        name: 'sign-off',
        type: 'approval',
        approvers: { users: ['approver@forge.test'], count: 1 },
        approval_timeout: '72h',
      },
      {
        name: 'deploy',
        type: 'api-call',
        config: {
          method: 'POST',
          url: `${target.url}/deploy/\${{ parameters.service }}`,
          headers: { Authorization: 'Bearer ${{ parameters.api_token }}', 'x-service': '${{ parameters.service }}' },
          body: { service: '${{ parameters.service }}', replicas: '${{ parameters.replicas }}' },
        },
      },
      { name: 'announce', type: 'script', config: { script: 'echo "$PARAM_SERVICE"' } },
    ],
  });
  // The approver must exist for the rule to be saved: they exist once they have called.
  expect((await call(forge.suite.approver, 'GET', '/forge/molds')).status).toBe(200);
  const runsBefore = (await call(writer, 'GET', '/forge/runs')).body.pagination.total_count;

  const planned = await call(writer, 'POST', '/forge/runs', {
    mold_slug: mold.slug,
    parameters: { service: 'payments', api_token: 's3cret' },
    dry_run: true,
  });
  expect(planned.status).toBe(200);
  expect(JSON.stringify(planned.body)).not.toContain('s3cret');
  expect(planned.body).toEqual({
    dry_run: true,
    mold_slug: mold.slug,
    mold_version: 1,
    parameters: { service: 'payments', replicas: 2 },
    secrets: ['api_token'],
    steps: [
      {
        position: 0,
        name: 'sign-off',
        type: 'approval',
        requires_approval: false,
        config: {},
        secrets: [],
        approval: {
          teams: [],
          roles: [],
          users: ['approver@forge.test'],
          count: 1,
          allow_self_approval: false,
          timeout: '72h',
        },
      },
      {
        position: 1,
        name: 'deploy',
        type: 'api-call',
        requires_approval: false,
        config: {
          method: 'POST',
          url: `${target.url}/deploy/payments`,
          headers: { 'x-service': 'payments' },
          body: { service: 'payments', replicas: 2 },
          timeout_seconds: 30,
          max_attempts: 3,
        },
        secrets: ['headers.Authorization'],
        approval: null,
      },
      {
        position: 2,
        name: 'announce',
        type: 'script',
        requires_approval: false,
        config: {
          script: 'echo "$PARAM_SERVICE"',
          timeout_seconds: 60,
          max_output_bytes: 65536,
          max_attempts: 3,
          environment: { PARAM_SERVICE: 'payments', PARAM_REPLICAS: '2' },
        },
        secrets: ['environment.PARAM_API_TOKEN'],
        approval: null,
      },
    ],
  });

  const invalid = await call(writer, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {}, dry_run: true });
  expect(invalid.status).toBe(400);
  expect(invalid.body.error.details).toEqual(
    expect.arrayContaining([{ field: 'parameters.service', message: 'is required' }]),
  );
  expect(
    (await call(stranger, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: {}, dry_run: true })).status,
  ).toBe(404);

  expect((await call(writer, 'GET', '/forge/runs')).body.pagination.total_count).toBe(runsBefore);
  expect(target.requests).toEqual([]);
  // A real start of the same mold shows in Temporal's visibility: once it does, it is the only one.
  const real = await startRun(mold.slug, { service: 'payments', api_token: 's3cret' });
  const query = `ShipyardMold = '${mold.id}' AND ShipyardKind = 'forge-run'`;
  const listed = await until('the real run in visibility', 30, async () => {
    const found: WorkflowExecutionInfo[] = [];
    for await (const info of forge.suite.api.deps.temporal.workflow.list({ query })) found.push(info);
    return found.length ? found : undefined;
  });
  expect(listed.map((info) => info.workflowId)).toEqual([real.workflow_id]);
  expect((await call(writer, 'POST', `/forge/runs/${real.id}/cancel`)).status).toBe(200);
}, 60_000);

test('a dry run of a mold whose rendered body passes its cap is the 413 a start would fail with, and a slug of no mold a 404', async () => {
  const mold = await createMold({
    parameters: [{ name: 'blob', type: 'string' }],
    actions: [
      {
        name: 'post',
        type: 'api-call',
        config: { url: `${target.url}/x`, body: Array.from({ length: 40 }, () => '${{ parameters.blob }}') },
      },
    ],
  });
  const big = await call(writer, 'POST', '/forge/runs', {
    mold_slug: mold.slug,
    parameters: { blob: 'x'.repeat(60_000) },
    dry_run: true,
  });
  expect(big.status).toBe(413);
  const none = await call(writer, 'POST', '/forge/runs', {
    mold_slug: `none-${randomUUID().slice(0, 6)}`,
    parameters: {},
    dry_run: true,
  });
  expect(none.status).toBe(404);
  expect(target.requests).toEqual([]);
});
