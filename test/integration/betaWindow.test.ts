import { ScheduleOverlapPolicy } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { apiRoutes } from '../../api/routes';
import { defineRoute, type RouteDefinition } from '../../api/http/route';
import { loadConfig } from '../../core/config';
import {
  AUTO_DISCONNECT_SCHEDULE_ID,
  betaGraceWorkflowId,
  type AutoDisconnectWorkflow,
  type BetaGraceWorkflow,
} from '../../core/license/licenseWorkflows';
import { TASK_QUEUES } from '../../core/taskQueues';
import { withTenant } from '../../db/tenancy';
import { until } from '../support/processes';
import {
  callApi,
  startApi,
  startWorkers,
  testConfig,
  testDeps,
  type TestApi,
  type TestWorkers,
} from '../support/harness';
import {
  auditTypes,
  connectedClusters,
  devKey,
  endedBetaKey,
  insertAgents,
  licenseTenant,
  type AgentSpec,
} from '../support/licenseSuite';

// The Beta window end to end over real HTTP, with a real platform worker running the Beta grace
// and auto-disconnect workflows on the lane's Temporal namespace: the first status read past the
// Beta end, the 423 on writes (reads, agent traffic and activation still working), a paid key
// lifting it, and the disconnect when the grace runs out (configured in seconds here).

jest.setTimeout(60_000);

const DAY_MS = 86_400_000;
const GRACE_SECONDS = 3;

/** Two writes that only exist here: one for agents, one for users, to prove the guard by declaration. */
const probeRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    path: '/beta-probe/agent-write',
    tag: 'Test',
    access: 'agent',
    summary: 'An agent write (test only)',
    responses: { 200: { description: 'ok', schema: { type: 'object' } } },
    handler: () => ({}),
  }),
  defineRoute({
    method: 'POST',
    path: '/beta-probe/user-write',
    tag: 'Test',
    access: 'authenticated',
    summary: 'A user write (test only)',
    responses: { 200: { description: 'ok', schema: { type: 'object' } } },
    handler: () => ({}),
  }),
];

let api: TestApi;
/** The same API with a grace of seconds, for the grace that runs out. */
let shortGraceApi: TestApi;
let workers: TestWorkers;

beforeAll(async () => {
  const routes = [...apiRoutes, ...probeRoutes];
  const base = loadConfig();
  const shortGrace = testConfig({ license: { ...base.license, betaGraceMs: GRACE_SECONDS * 1000 } });
  [api, shortGraceApi, workers] = await Promise.all([
    startApi({ routes }),
    testDeps(shortGrace).then((deps) => startApi({ deps, routes })),
    startWorkers(['platform']),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.close(), shortGraceApi?.close(), workers?.stop()]);
});

const agentCall = async (target: TestApi, token: string) =>
  (
    await fetch(`${target.url}/api/v1/beta-probe/agent-write`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    })
  ).status;

const AGENTS: AgentSpec[] = [
  { clusterId: 'big-oldest', nodes: 9, ageSeconds: 500 },
  { clusterId: 'small-newer', nodes: 2, ageSeconds: 100 },
  { clusterId: 'small-oldest', nodes: 2, ageSeconds: 300 },
  { clusterId: 'already-revoked', nodes: 1, ageSeconds: 900, revoked: true },
];

describe('a Beta tenant past its Beta end', () => {
  let tenant: Awaited<ReturnType<typeof licenseTenant>>;
  let agentToken: string;
  const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

  beforeAll(async () => {
    tenant = await licenseTenant('beta-window');
    agentToken = (await insertAgents(api.deps.db, tenant.tenantId, [AGENTS[0]])).get('big-oldest')!;
    expect((await call(tenant.admin, 'POST', '/license/activate', { license_key: endedBetaKey() })).status).toBe(200);
  });

  test('the first status read marks the grace (30 days), starts the grace workflow and is audited; later reads keep that end', async () => {
    const before = Date.now();
    const first = await call(tenant.viewer, 'GET', '/license');
    expect(first.body).toMatchObject({
      edition: 'beta',
      key_prefix: 'SHP-BE',
      beta_ends_at: '2026-11-10T00:00:00.000Z',
      is_read_only: true,
      is_valid: true,
    });
    const graceEnds = Date.parse(first.body.beta_grace_ends_at);
    expect(graceEnds).toBeGreaterThanOrEqual(before + 30 * DAY_MS - 60_000);
    expect(graceEnds).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS + 60_000);
    expect((await call(tenant.viewer, 'GET', '/license')).body.beta_grace_ends_at).toBe(first.body.beta_grace_ends_at);
    const grace = await api.deps.temporal.workflow.getHandle(betaGraceWorkflowId(tenant.tenantId)).describe();
    expect(grace.status.name).toBe('RUNNING');
    expect(await auditTypes(api.deps.db, tenant.tenantId)).toEqual(['license.activated', 'license.beta_grace_started']);
  });

  test('every write of the tenant answers 423 BETA_ENDED_READ_ONLY and changes nothing; reads keep working', async () => {
    for (const [method, path, body] of [
      ['POST', '/admin/teams', { name: 'Blocked team' }],
      ['POST', '/license/deactivate', undefined],
      ['POST', '/beta-probe/user-write', undefined],
    ] as const) {
      const refused = await call(tenant.admin, method, path, body);
      expect(refused.status).toBe(423);
      expect(refused.body.error.code).toBe('BETA_ENDED_READ_ONLY');
    }
    expect((await call(tenant.viewer, 'GET', '/teams')).status).toBe(200);
    // Declared exempt: it stores nothing.
    expect((await call(tenant.admin, 'POST', '/manifests/validate', {})).status).not.toBe(423);
    expect((await call(tenant.admin, 'GET', '/admin/teams')).body.teams).toEqual([]);
    expect((await call(tenant.viewer, 'GET', '/license')).body.edition).toBe('beta');
  });

  test('agent traffic is exempt by its declaration (access: agent)', async () => {
    expect(await agentCall(api, agentToken)).toBe(200);
  });

  test('another tenant is not blocked', async () => {
    const other = await licenseTenant('beta-window-other');
    expect((await callApi(api, other.admin, 'POST', '/admin/teams', { name: 'Allowed team' })).status).toBe(201);
  });

  test('activating a paid key is allowed, lifts the block on the next status read (in any API process) and ends the grace workflow', async () => {
    // Another API process has seen the tenant read-only (and cached it).
    const elsewhere = await callApi(shortGraceApi, tenant.admin, 'POST', '/admin/teams', { name: 'Elsewhere' });
    expect(elsewhere.status).toBe(423);
    const activated = await call(tenant.admin, 'POST', '/license/activate', {
      license_key: devKey({ edition: 'standard' }),
    });
    expect(activated.status).toBe(200);
    expect((await call(tenant.viewer, 'GET', '/license')).body).toMatchObject({
      edition: 'standard',
      is_read_only: false,
      beta_ends_at: null,
      beta_grace_ends_at: null,
    });
    expect((await call(tenant.admin, 'POST', '/admin/teams', { name: 'Paid team' })).status).toBe(201);
    expect((await callApi(shortGraceApi, tenant.viewer, 'GET', '/license')).body.is_read_only).toBe(false);
    const afterRead = await callApi(shortGraceApi, tenant.admin, 'POST', '/admin/teams', { name: 'Elsewhere' });
    expect(afterRead.status).toBe(201);
    const grace = api.deps.temporal.workflow.getHandle<BetaGraceWorkflow>(betaGraceWorkflowId(tenant.tenantId));
    expect(await grace.result()).toEqual({ outcome: 'licensed' });
    expect(await connectedClusters(api.deps.db, tenant.tenantId)).toEqual(['big-oldest']);
  });
});

test('when the grace runs out, one cluster stays (smallest node count, oldest first) and the others are revoked, their data kept, audited', async () => {
  const tenant = await licenseTenant('beta-grace-ends');
  const tokens = await insertAgents(shortGraceApi.deps.db, tenant.tenantId, AGENTS);
  await callApi(shortGraceApi, tenant.admin, 'POST', '/license/activate', { license_key: endedBetaKey() });
  const status = await callApi(shortGraceApi, tenant.viewer, 'GET', '/license');
  expect(Date.parse(status.body.beta_grace_ends_at) - Date.now()).toBeLessThanOrEqual(GRACE_SECONDS * 1000);

  const grace = shortGraceApi.deps.temporal.workflow.getHandle<BetaGraceWorkflow>(betaGraceWorkflowId(tenant.tenantId));
  expect(await grace.result()).toEqual({
    outcome: 'disconnected',
    disconnection: { kept: 'small-oldest', revoked: ['small-newer', 'big-oldest'] },
  });
  expect(await connectedClusters(shortGraceApi.deps.db, tenant.tenantId)).toEqual(['small-oldest']);
  const agents = await withTenant(shortGraceApi.deps.db, tenant.tenantId, (trx) => trx('k8s_agents').count('* as n'));
  expect(Number(agents[0].n)).toBe(AGENTS.length);
  expect(await agentCall(shortGraceApi, tokens.get('big-oldest')!)).toBe(401);
  expect(await agentCall(shortGraceApi, tokens.get('small-oldest')!)).toBe(200);
  expect((await callApi(shortGraceApi, tenant.viewer, 'GET', '/license/usage')).body.resource_usage[0].used).toBe(1);
  const activity = await callApi(shortGraceApi, tenant.admin, 'GET', '/admin/activity?limit=5');
  expect(activity.body.items[0]).toMatchObject({
    eventType: 'license.auto_disconnected',
    actor: 'system:auto-disconnect',
  });
});

describe('the daily auto-disconnect', () => {
  test('the platform pool schedules it every day on its queue, skipping a run while one is going', async () => {
    const schedule = await api.deps.temporal.schedule.getHandle(AUTO_DISCONNECT_SCHEDULE_ID).describe();
    expect(schedule.spec.intervals?.map((interval) => interval.every)).toEqual([DAY_MS]);
    expect(schedule.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(schedule.action).toEqual(
      expect.objectContaining({
        type: 'startWorkflow',
        workflowType: 'autoDisconnect',
        taskQueue: TASK_QUEUES.platform,
        args: [{ grace_ms: 30 * DAY_MS }],
      }),
    );
  });

  test('with two platform workers, a cycle of the schedule is one run, its workflow id carrying the scheduled time', async () => {
    const second = await startWorkers(['platform']);
    try {
      const tenant = await licenseTenant('two-workers');
      await insertAgents(api.deps.db, tenant.tenantId, AGENTS);
      await callApi(api, tenant.admin, 'POST', '/license/activate', { license_key: endedBetaKey() });
      await withTenant(api.deps.db, tenant.tenantId, (trx) =>
        trx('licenses').update({ beta_grace_ends_at: new Date(Date.now() - DAY_MS) }),
      );
      const schedule = api.deps.temporal.schedule.getHandle(AUTO_DISCONNECT_SCHEDULE_ID);
      // The list of recent actions is capped, so the new one is told apart by its run, not by the count.
      const runOf = (recent: { action: { workflow: { firstExecutionRunId: string } } }) =>
        recent.action.workflow.firstExecutionRunId;
      const earlier = new Set((await schedule.describe()).info.recentActions.map(runOf));
      await schedule.trigger();
      const action = await until('the triggered run', 20, async () =>
        (await schedule.describe()).info.recentActions.find((recent) => !earlier.has(runOf(recent))),
      );
      expect(action.action.workflow.workflowId).toMatch(
        /^auto-disconnect-scheduled-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
      );
      const run = api.deps.temporal.workflow.getHandle<AutoDisconnectWorkflow>(action.action.workflow.workflowId);
      expect((await run.result()).tenants).toBeGreaterThanOrEqual(1);
      const added = (await schedule.describe()).info.recentActions.filter((recent) => !earlier.has(runOf(recent)));
      expect(added).toHaveLength(1);
      expect(await connectedClusters(api.deps.db, tenant.tenantId)).toEqual(['small-oldest']);
      expect(
        (await auditTypes(api.deps.db, tenant.tenantId)).filter((t) => t === 'license.auto_disconnected'),
      ).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });

  test('a run disconnects every tenant past its grace and leaves tenants in their grace or on a paid key alone', async () => {
    const [past, inGrace, paid] = await Promise.all([
      licenseTenant('past-grace'),
      licenseTenant('in-grace'),
      licenseTenant('paid'),
    ]);
    for (const [t, key] of [
      [past, endedBetaKey()],
      [inGrace, endedBetaKey()],
      [paid, devKey({ edition: 'standard' })],
    ] as const) {
      await insertAgents(api.deps.db, t.tenantId, AGENTS);
      expect((await callApi(api, t.admin, 'POST', '/license/activate', { license_key: key })).status).toBe(200);
    }
    // Past: its grace ended yesterday. In grace: it ends in a day.
    for (const [t, endsInDays] of [
      [past, -1],
      [inGrace, 1],
    ] as const) {
      await withTenant(api.deps.db, t.tenantId, (trx) =>
        trx('licenses').update({ beta_grace_ends_at: new Date(Date.now() + endsInDays * DAY_MS) }),
      );
    }
    const result = await api.deps.temporal.workflow.execute<AutoDisconnectWorkflow>('autoDisconnect', {
      workflowId: `auto-disconnect-test-${randomUUID()}`,
      taskQueue: TASK_QUEUES.platform,
      args: [{ grace_ms: 30 * DAY_MS }],
    });
    expect(result.tenants).toBeGreaterThanOrEqual(1);
    expect(await connectedClusters(api.deps.db, past.tenantId)).toEqual(['small-oldest']);
    const all = ['big-oldest', 'small-newer', 'small-oldest'];
    expect(await connectedClusters(api.deps.db, inGrace.tenantId)).toEqual(all);
    expect(await connectedClusters(api.deps.db, paid.tenantId)).toEqual(all);
    expect(await auditTypes(api.deps.db, past.tenantId)).toContain('license.auto_disconnected');
    expect(await auditTypes(api.deps.db, inGrace.tenantId)).not.toContain('license.auto_disconnected');
  });
});
