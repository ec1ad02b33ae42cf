import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { notifyUsers } from '../../core/notifications/commands';
import { TASK_QUEUES } from '../../core/taskQueues';
import { bearer, callApi, jsonOf, startApi, startWorkers, type TestApi, type TestWorkers } from '../support/harness';
import { adminTenant, type AdminTenant } from '../support/adminSuite';
import { until } from '../support/processes';
import { sseEvents, type SseEvent } from '../support/sse';

// Notifications over HTTP, from each trigger: a run waiting for approval (its approvers, not its
// starter, not a viewer), a run its starter started ending, an API key about to expire (the
// platform pool's daily workflow, once per key); each user sees only their own, in their tenant;
// preferences turn a kind off.

let api: TestApi;
let workers: TestWorkers;
let t: AdminTenant;
let other: AdminTenant;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
type Item = { id: string; kind: string; title: string; payload: Record<string, unknown>; read_at: string | null };
const list = async (token: string, query = ''): Promise<Item[]> =>
  (await call(token, 'GET', `/notifications${query}`)).body.notifications;
const ofRun = (items: Item[], runId: string) => items.filter((n) => n.payload.run_id === runId);

beforeAll(async () => {
  workers = await startWorkers(['forge', 'platform']);
  api = await startApi();
  [t, other] = await Promise.all([adminTenant('notify'), adminTenant('notify-other')]);
}, 60_000);
afterAll(async () => {
  await api?.close();
  await workers?.stop();
}, 30_000);

async function gatedRun(starter: string): Promise<string> {
  const mold = await call(starter, 'POST', '/forge/molds', {
    slug: `gate-${randomUUID().slice(0, 8)}`,
    name: 'Gate',
    actions: [{ name: 'gate', type: 'approval' }],
  });
  const run = await call(starter, 'POST', '/forge/runs', { mold_slug: mold.body.slug, parameters: {} });
  expect(run.status).toBe(201);
  await until('the run to wait for approval', 30, async () =>
    (await call(starter, 'GET', `/forge/runs/${run.body.id}`)).body.status === 'awaiting_approval' ? true : undefined,
  );
  return run.body.id;
}

const finished = (token: string, runId: string) =>
  until('the run to end', 30, async () => {
    const { body } = await call(token, 'GET', `/forge/runs/${runId}`);
    return ['completed', 'failed', 'cancelled'].includes(body.status) ? body.status : undefined;
  });

test('a run waiting for approval notifies the forge:write users but its starter; approved and done, its starter hears it ended', async () => {
  const runId = await gatedRun(t.editor);
  const forAdmin = ofRun(await list(t.admin), runId);
  expect(forAdmin).toEqual([
    expect.objectContaining({
      kind: 'run_awaiting_approval',
      read_at: null,
      payload: expect.objectContaining({ run_id: runId, status: 'awaiting_approval' }),
    }),
  ]);
  expect(ofRun(await list(t.editor), runId)).toEqual([]);
  expect(ofRun(await list(t.viewer), runId)).toEqual([]);

  expect((await call(t.admin, 'POST', `/forge/runs/${runId}/approve`, {})).status).toBe(200);
  expect(await finished(t.editor, runId)).toBe('completed');
  const ended = await until('the starter to be notified', 10, async () => {
    const items = ofRun(await list(t.editor), runId);
    return items.length ? items : undefined;
  });
  expect(ended).toEqual([
    expect.objectContaining({
      kind: 'run_ended',
      payload: expect.objectContaining({ run_id: runId, status: 'completed' }),
    }),
  ]);
  // Only the starter hears of the end.
  expect(ofRun(await list(t.admin), runId).map((n) => n.kind)).toEqual(['run_awaiting_approval']);
});

test("a rejected run ends failed and notifies its starter; another tenant's approvers hear of none of it", async () => {
  const runId = await gatedRun(t.editor);
  expect((await call(t.admin, 'POST', `/forge/runs/${runId}/reject`, {})).status).toBe(200);
  expect(await finished(t.editor, runId)).toBe('failed');
  const ended = await until('the failure notice', 10, async () =>
    ofRun(await list(t.editor), runId).find((n) => n.kind === 'run_ended'),
  );
  expect(ended.payload.status).toBe('failed');
  expect(ofRun(await list(other.admin), runId)).toEqual([]);
  expect(ofRun(await list(other.editor), runId)).toEqual([]);
});

test('a cancelled run notifies its starter; a starter who turned run_ended off hears nothing', async () => {
  const runId = await gatedRun(t.admin);
  expect((await call(t.admin, 'POST', `/forge/runs/${runId}/cancel`, {})).status).toBe(200);
  expect(await finished(t.admin, runId)).toBe('cancelled');
  const ended = await until('the cancel notice', 10, async () =>
    ofRun(await list(t.admin), runId).find((n) => n.kind === 'run_ended'),
  );
  expect(ended.payload.status).toBe('cancelled');

  const quiet = await adminTenant('notify-quiet');
  const off = await call(quiet.admin, 'PUT', '/notifications/preferences', { in_app: { run_ended: false } });
  expect(off.body.in_app).toEqual({
    run_awaiting_approval: true,
    run_ended: false,
    api_key_expiring: true,
    governance_action_assigned: true,
  });
  const silent = await gatedRun(quiet.admin);
  await call(quiet.admin, 'POST', `/forge/runs/${silent}/cancel`, {});
  await finished(quiet.admin, silent);
  // The approvers' notice shows the trigger ran; the starter's end notice never comes.
  expect(ofRun(await list(quiet.editor), silent).map((n) => n.kind)).toEqual(['run_awaiting_approval']);
  expect(ofRun(await list(quiet.admin), silent)).toEqual([]);
});

test('an API key expiring within 7 days notifies its owner once, however often the daily workflow runs', async () => {
  const owner = await adminTenant('notify-keys');
  const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
  const later = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const key = await call(owner.admin, 'POST', '/admin/api-keys', {
    name: 'deploy-bot',
    scopes: ['catalog:read'],
    expires_at: soon,
  });
  await call(owner.admin, 'POST', '/admin/api-keys', {
    name: 'long-lived',
    scopes: ['catalog:read'],
    expires_at: later,
  });
  const runDaily = () =>
    api.deps.temporal.workflow.execute('apiKeyExpiryNotices', {
      taskQueue: TASK_QUEUES.platform,
      workflowId: `api-key-expiry-test-${randomUUID()}`,
      args: [{ notice_ms: 7 * 86_400_000 }],
    });
  await runDaily();
  await runDaily();
  const notices = (await list(owner.admin)).filter((n) => n.kind === 'api_key_expiring');
  expect(notices).toEqual([
    expect.objectContaining({
      payload: expect.objectContaining({ api_key_id: key.body.id, name: 'deploy-bot', expires_at: soon }),
    }),
  ]);
  expect((await list(owner.editor)).filter((n) => n.kind === 'api_key_expiring')).toEqual([]);
}, 60_000);

test('a governance action notifies the users it is assigned to (a user by email, a team by its members), never its assigner', async () => {
  const gov = await adminTenant('notify-gov');
  const slug = `sre-${randomUUID().slice(0, 8)}`;
  const team = await call(gov.admin, 'POST', '/admin/teams', { name: 'SRE', slug });
  await call(gov.admin, 'POST', `/admin/teams/${team.body.id}/members`, { user_id: gov.adminId, role: 'member' });
  await call(gov.admin, 'POST', `/admin/teams/${team.body.id}/members`, { user_id: gov.editorId, role: 'member' });
  const assignedTo = (token: string) =>
    list(token).then((items) => items.filter((n) => n.kind === 'governance_action_assigned').map((n) => n.payload));

  const created = await call(gov.editor, 'POST', '/governance/actions', {
    title: 'Rotate the keys',
    type: 'security',
    priority: 'high',
    assigned_to: `viewer@${gov.slug}.test`,
  });
  expect(created.status).toBe(201);
  const action = { action_id: created.body.id };
  expect(await assignedTo(gov.viewer)).toEqual([expect.objectContaining(action)]);
  expect(await assignedTo(gov.editor)).toEqual([]);

  // Reassigned to the team by one of its members: the other member hears of it, the assigner does not.
  expect(
    (await call(gov.editor, 'PATCH', `/governance/actions/${created.body.id}`, { assigned_to: slug })).status,
  ).toBe(200);
  expect(await assignedTo(gov.admin)).toEqual([expect.objectContaining({ ...action, assigned_to: slug })]);
  expect(await assignedTo(gov.editor)).toEqual([]);
  // Another field changed: no new notice.
  await call(gov.editor, 'PATCH', `/governance/actions/${created.body.id}`, { priority: 'low' });
  expect(await assignedTo(gov.admin)).toHaveLength(1);
  expect(await assignedTo(other.admin)).toEqual([]);
});

describe('the list, reads and isolation', () => {
  let user: AdminTenant;
  /** One transaction each, so each has its own created_at (now() is the transaction's start). */
  const seed = async (tenant: AdminTenant, userId: string, n: number) => {
    for (let i = 0; i < n; i++) {
      await withTenant(api.deps.db, tenant.tenantId, (trx) =>
        notifyUsers(trx, tenant.tenantId, [userId], 'governance_action_assigned', {
          title: `action ${i}`,
          payload: { action_id: `a-${i}` },
        }),
      );
    }
  };

  beforeAll(async () => {
    user = await adminTenant('notify-list');
    await seed(user, user.viewerId, 5);
    await seed(other, other.viewerId, 2);
  });

  test('unread first, then newest first, paged by cursor; read marks one, read-all the rest', async () => {
    const all = await list(user.viewer);
    expect(all.map((n) => n.title)).toEqual(['action 4', 'action 3', 'action 2', 'action 1', 'action 0']);
    const read = await call(user.viewer, 'POST', `/notifications/${all[0].id}/read`);
    expect(read.status).toBe(200);
    expect(read.body.read_at).toEqual(expect.any(String));

    const first = await call(user.viewer, 'GET', '/notifications?limit=2');
    expect(first.body.unread_count).toBe(4);
    expect(first.body.notifications.map((n: Item) => n.title)).toEqual(['action 3', 'action 2']);
    const second = await call(user.viewer, 'GET', `/notifications?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.notifications.map((n: Item) => n.title)).toEqual(['action 1', 'action 0']);
    const third = await call(user.viewer, 'GET', `/notifications?limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body).toMatchObject({ notifications: [{ title: 'action 4' }], next_cursor: '' });

    expect((await call(user.viewer, 'POST', '/notifications/read-all')).body).toEqual({ updated: 4 });
    expect((await call(user.viewer, 'GET', '/notifications')).body.unread_count).toBe(0);
  });

  test("another user's notifications, in the same tenant or another, are neither listed nor markable", async () => {
    const mine = await list(other.viewer);
    expect(mine).toHaveLength(2);
    expect(await list(other.admin)).toEqual([]);
    expect(await list(user.viewer)).not.toEqual(expect.arrayContaining([expect.objectContaining({ id: mine[0].id })]));
    expect((await call(other.admin, 'POST', `/notifications/${mine[0].id}/read`)).status).toBe(404);
    expect((await call(user.admin, 'POST', `/notifications/${mine[0].id}/read`)).status).toBe(404);
    expect((await call(user.admin, 'POST', '/notifications/read-all')).body).toEqual({ updated: 0 });
    expect((await list(other.viewer)).every((n) => n.read_at === null)).toBe(true);
  });

  test('preferences are per user and an unknown kind is a 400', async () => {
    await call(user.admin, 'PUT', '/notifications/preferences', { in_app: { api_key_expiring: false } });
    expect((await call(user.viewer, 'GET', '/notifications/preferences')).body.in_app.api_key_expiring).toBe(true);
    expect((await call(user.admin, 'GET', '/notifications/preferences')).body.in_app.api_key_expiring).toBe(false);
    const unknown = await call(user.admin, 'PUT', '/notifications/preferences', { in_app: { mentions: true } });
    expect(unknown.status).toBe(400);
  });

  test('an API key reads the notifications of the user who owns it', async () => {
    const key = await call(user.admin, 'POST', '/admin/api-keys', { name: 'reader', scopes: ['catalog:read'] });
    await seed(user, user.adminId, 1);
    expect((await list(key.body.token)).map((n) => n.title)).toEqual(['action 0']);
  });
});

describe('follow=true', () => {
  type Summary = { unread_count: number; notifications: Item[] };
  const follow = (token: string, signal: AbortSignal) =>
    fetch(`${api.url}/api/v1/notifications?follow=true`, { headers: bearer(token), signal });
  const notify = (tenant: AdminTenant, userId: string, title: string) =>
    withTenant(api.deps.db, tenant.tenantId, (trx) =>
      notifyUsers(trx, tenant.tenantId, [userId], 'governance_action_assigned', { title, payload: {} }),
    );

  test("streams the caller's unread summary at once and at each of their notifications added or read, never another user's", async () => {
    const live = await adminTenant('notify-live');
    const abort = new AbortController();
    try {
      const res = await follow(live.viewer, abort.signal);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const events = sseEvents<Summary>(res);
      const next = async () => (await events.next()).value as SseEvent<Summary>;
      expect(await next()).toEqual({ event: 'unread', id: undefined, data: { unread_count: 0, notifications: [] } });

      await notify(live, live.viewerId, 'first');
      expect((await next()).data).toMatchObject({ unread_count: 1, notifications: [{ title: 'first' }] });
      // Another user's, in the tenant or another, wakes nothing here: the next event is the viewer's own.
      await notify(live, live.adminId, 'not yours');
      await notify(other, other.viewerId, 'not yours either');
      await notify(live, live.viewerId, 'second');
      const second = (await next()).data;
      expect(second.notifications.map((n) => n.title)).toEqual(['second', 'first']);

      await call(live.viewer, 'POST', '/notifications/read-all');
      expect((await next()).data).toEqual({ unread_count: 0, notifications: [] });
    } finally {
      abort.abort();
    }
  });

  test('a user holds at most SHIPYARD_NOTIFICATION_STREAMS_PER_USER (3) open streams; one more is a 429', async () => {
    const busy = await adminTenant('notify-busy');
    const abort = new AbortController();
    try {
      const open = await Promise.all([1, 2, 3].map(() => follow(busy.viewer, abort.signal)));
      expect(open.map((res) => res.status)).toEqual([200, 200, 200]);
      const refused = await follow(busy.viewer, abort.signal);
      expect(refused.status).toBe(429);
      expect((await jsonOf(refused)).error.message).toContain('notification streams');
      expect((await follow(busy.admin, abort.signal)).status).toBe(200);
    } finally {
      abort.abort();
    }
  });
});
