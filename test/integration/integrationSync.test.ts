import { randomUUID } from 'node:crypto';
import type { IntegrationSyncResult } from '../../core/integrations/syncControl';
import { createIntegrationSyncActivities } from '../../activities/integrationSync';
import { createKeyring } from '../../core/crypto/keyring';
import { syncTargets } from '../../core/integrations/syncStore';
import { createPool } from '../../db/pool';
import { useCatalogSuite } from '../support/catalogSuite';
import { startFakeIncidentTool, type FakeIncidentTool } from '../support/fakeIncidentTool';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { startWorkers, testConfig, type TestWorkers } from '../support/harness';
import { createWorkerClients } from '../../workers/clients';

// Integration sync over HTTP with the real platform worker, against local fakes of the source
// host and the incident tool: what a sync brings in, how a failure shows on the integration and
// how the next success clears it, the 409s, GET /integrations/configs, and the tenant boundary.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();
let host: FakeSourceHost;
let tool: FakeIncidentTool;
let workers: TestWorkers;
let sourceHostId: string;
let incidentToolId: string;
/** The system role, as the schedule's tick reads integrations across tenants. */
const system = createPool(testConfig().database.systemUrl, 1);

beforeAll(async () => {
  [host, tool] = await Promise.all([startFakeSourceHost(), startFakeIncidentTool()]);
  host.repositories.add('acme/payments');
  host.repositories.add('acme/ledger');
  const created = await Promise.all([
    call(suite.adminA.token, 'POST', '/integrations', {
      name: 'source host',
      type: 'vcs-host-a',
      config: { base_url: host.url, token: host.token },
    }),
    call(suite.adminA.token, 'POST', '/integrations', {
      name: 'pager',
      type: 'incident-tool-a',
      config: { base_url: tool.url, token: tool.token },
    }),
  ]);
  expect(created.map((res) => res.status)).toEqual([201, 201]);
  [sourceHostId, incidentToolId] = created.map((res) => res.body.id);
  workers = await startWorkers(['platform']);
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await Promise.all([host?.close(), tool?.close(), system.destroy()]);
});

/** POST /integrations/{id}/sync as tenant A's admin, then the workflow's result. */
async function syncNow(id: string): Promise<{ started: Record<string, unknown>; result: IntegrationSyncResult }> {
  const res = await call(suite.adminA.token, 'POST', `/integrations/${id}/sync`);
  expect(res.status).toBe(200);
  const result = await suite.api.deps.temporal.workflow.getHandle(res.body.workflow_id).result();
  return { started: res.body, result };
}

const integration = async (id: string) => (await call(suite.adminA.token, 'GET', `/integrations/${id}`)).body;

describe('a vcs-host-a sync', () => {
  test("lists the repositories with the crawler's repository sync and makes the integration active", async () => {
    const { started, result } = await syncNow(sourceHostId);
    expect(started).toEqual({
      integration_id: sourceHostId,
      workflow_id: `integration-sync-${sourceHostId}`,
      started_at: expect.any(String),
      already_running: false,
    });
    expect(result).toMatchObject({ status: 'active', counts: { repositories_due: 2 } });
    const listed = await call(suite.adminA.token, 'GET', '/repositories');
    expect(listed.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual([
      'acme/ledger',
      'acme/payments',
    ]);
    expect(await integration(sourceHostId)).toMatchObject({
      status: 'active',
      status_message: null,
      last_sync: expect.any(String),
    });
  }, 60_000);

  test('a host outage sets status error with a readable message and keeps last_sync; the next success clears it', async () => {
    const before = await integration(sourceHostId);
    host.outages = 1;
    expect((await syncNow(sourceHostId)).result.status).toBe('error');
    const failed = await integration(sourceHostId);
    expect(failed).toMatchObject({
      status: 'error',
      status_message: 'the source host answered 502 to GET /user/repos',
      last_sync: before.last_sync,
    });
    expect((await syncNow(sourceHostId)).result.status).toBe('active');
    const recovered = await integration(sourceHostId);
    expect(recovered).toMatchObject({ status: 'active', status_message: null });
    expect(Date.parse(recovered.last_sync)).toBeGreaterThan(Date.parse(before.last_sync));
  }, 60_000);
});

describe('an incident-tool-a sync', () => {
  let payments: { id: string; service_id: string };
  let ledger: { id: string };
  beforeAll(async () => {
    // Entities name their tool service by tag; PSVC3 is named by none and stays out.
    payments = await createEntity({
      service_id: uniqueId('payments'),
      name: 'Payments',
      tags: ['billing', 'incident-tool-a/service-id=PSVC1'],
    });
    ledger = await createEntity({
      service_id: uniqueId('ledger'),
      name: 'Ledger',
      tags: ['incident-tool-a/service-id=PSVC2'],
    });
    tool.services.set('PSVC1', { name: 'Payments API' });
    tool.services.set('PSVC2', { name: 'Ledger' });
    tool.services.set('PSVC3', { name: 'Unmatched' });
    tool.incidents.set('PSVC1', [
      {
        id: 'Q1',
        title: 'Card charges failing',
        status: 'resolved',
        urgency: 'high',
        severity: 'critical',
        created_at: '2026-11-20T10:00:00.123Z',
        resolved_at: '2026-11-20T11:30:00.456Z',
        updated_at: new Date().toISOString(),
        html_url: 'https://incidents.example/Q1',
      },
      {
        id: 'Q2',
        title: 'Refund latency',
        status: 'triggered',
        urgency: 'low',
        created_at: new Date(Date.now() - 3_600_000).toISOString(),
      },
    ]);
    tool.incidents.set('PSVC3', [
      { id: 'Q9', title: 'Elsewhere', status: 'triggered', created_at: new Date().toISOString() },
    ]);
    tool.oncalls.set('PSVC1', [
      {
        escalation_level: 2,
        escalation_policy: { name: 'Payments' },
        schedule: { name: 'Payments secondary' },
        user: { name: 'Bo Backup', email: 'bo@a.test' },
        start: '2026-11-27T00:00:00Z',
        end: '2026-12-04T00:00:00Z',
      },
      {
        escalation_level: 1,
        escalation_policy: { name: 'Payments' },
        schedule: { name: 'Payments primary' },
        user: { name: 'Ada Primary', email: 'ada@a.test' },
        start: '2026-11-27T00:00:00Z',
        end: '2026-11-28T00:00:00Z',
      },
    ]);
  });

  test('brings each matched entity its incidents (newest first, exact times) and its on-call, by level', async () => {
    const { result } = await syncNow(incidentToolId);
    expect(result).toEqual({
      status: 'active',
      counts: { services: 3, matched_services: 2, incidents: 2, oncall: 2 },
    });
    expect(tool.requests.every((r) => r.authorization === `Bearer ${tool.token}`)).toBe(true);
    const incidents = await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents`);
    expect(incidents.status).toBe(200);
    expect(incidents.body.incidents.map((i: { external_id: string }) => i.external_id)).toEqual(['Q2', 'Q1']);
    expect(incidents.body.incidents[1]).toMatchObject({
      integration_id: incidentToolId,
      service_id: 'PSVC1',
      title: 'Card charges failing',
      status: 'resolved',
      urgency: 'high',
      severity: 'critical',
      url: 'https://incidents.example/Q1',
      opened_at: '2026-11-20T10:00:00.123Z',
      resolved_at: '2026-11-20T11:30:00.456Z',
    });
    // By service id as well as by id; a status filter; pages.
    const open = await call(suite.adminA.token, 'GET', `/entities/${payments.service_id}/incidents?status=triggered`);
    expect(open.body.incidents.map((i: { external_id: string }) => i.external_id)).toEqual(['Q2']);
    const first = await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents?limit=1`);
    const second = await call(
      suite.adminA.token,
      'GET',
      `/entities/${payments.id}/incidents?limit=1&cursor=${first.body.next_cursor}`,
    );
    expect(
      [...first.body.incidents, ...second.body.incidents].map((i: { external_id: string }) => i.external_id),
    ).toEqual(['Q2', 'Q1']);
    expect(second.body.next_cursor).toBe('');
    expect((await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents?status=open`)).status).toBe(400);

    const oncall = await call(suite.adminA.token, 'GET', `/entities/${payments.id}/oncall`);
    expect(oncall.status).toBe(200);
    expect(oncall.body.oncall).toEqual([
      expect.objectContaining({
        level: 1,
        user_name: 'Ada Primary',
        user_email: 'ada@a.test',
        schedule: 'Payments primary',
        escalation_policy: 'Payments',
        starts_at: '2026-11-27T00:00:00.000Z',
        ends_at: '2026-11-28T00:00:00.000Z',
      }),
      expect.objectContaining({ level: 2, user_name: 'Bo Backup' }),
    ]);
    // Matched but quiet: nothing, and no error.
    expect((await call(suite.adminA.token, 'GET', `/entities/${ledger.id}/incidents`)).body.incidents).toEqual([]);
    expect((await call(suite.adminA.token, 'GET', `/entities/${ledger.id}/oncall`)).body.oncall).toEqual([]);
  }, 60_000);

  test('a second sync upserts: an incident resolved upstream is resolved here, on-call is replaced', async () => {
    const q2 = tool.incidents.get('PSVC1')![1];
    Object.assign(q2, {
      status: 'resolved',
      resolved_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    });
    tool.oncalls.set('PSVC1', [
      { escalation_level: 1, user: { name: 'Cy Next', email: 'cy@a.test' }, schedule: null, start: null, end: null },
    ]);
    expect((await syncNow(incidentToolId)).result.status).toBe('active');
    const incidents = (await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents`)).body.incidents;
    expect(incidents).toHaveLength(2);
    expect(incidents[0]).toMatchObject({ external_id: 'Q2', status: 'resolved', resolved_at: q2.resolved_at });
    const oncall = (await call(suite.adminA.token, 'GET', `/entities/${payments.id}/oncall`)).body.oncall;
    expect(oncall).toEqual([
      expect.objectContaining({
        level: 1,
        user_name: 'Cy Next',
        schedule: null,
        escalation_policy: null,
        starts_at: null,
      }),
    ]);
  }, 60_000);

  test('a 401 from the tool sets status error (no token in the message) and keeps last_sync; the next success sets active', async () => {
    const before = await integration(incidentToolId);
    const rightToken = tool.token;
    tool.token = 'rotated-upstream';
    try {
      expect((await syncNow(incidentToolId)).result.status).toBe('error');
    } finally {
      tool.token = rightToken;
    }
    const failed = await integration(incidentToolId);
    expect(failed).toMatchObject({
      status: 'error',
      status_message: 'incident-tool-a answered 401 to GET /services',
      last_sync: before.last_sync,
    });
    expect(JSON.stringify(failed)).not.toContain(rightToken);
    // Incidents already synced stay.
    expect((await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents`)).body.incidents).toHaveLength(
      2,
    );
    expect((await syncNow(incidentToolId)).result.status).toBe('active');
    expect(await integration(incidentToolId)).toMatchObject({ status: 'active', status_message: null });
  }, 60_000);

  test('an answer that is not the tool API fails the sync with why, and writes nothing of it', async () => {
    const incidents = tool.incidents.get('PSVC1')!;
    incidents.push({
      id: 'Q3',
      title: 'No start',
      status: 'triggered',
      created_at: 'yesterday',
      updated_at: new Date().toISOString(),
    });
    try {
      expect((await syncNow(incidentToolId)).result.status).toBe('error');
    } finally {
      incidents.pop();
    }
    expect(await integration(incidentToolId)).toMatchObject({
      status: 'error',
      status_message: 'an incident is not what the tool API answers',
    });
    const listed = (await call(suite.adminA.token, 'GET', `/entities/${payments.id}/incidents`)).body.incidents;
    expect(listed.map((i: { external_id: string }) => i.external_id)).toEqual(['Q2', 'Q1']);
    expect((await syncNow(incidentToolId)).result.status).toBe('active');
  }, 60_000);

  test('a POST while the sync runs answers with the running one', async () => {
    tool.delayMs = 1000;
    try {
      const first = await call(suite.adminA.token, 'POST', `/integrations/${incidentToolId}/sync`);
      const second = await call(suite.adminA.token, 'POST', `/integrations/${incidentToolId}/sync`);
      expect(first.body.already_running).toBe(false);
      expect(second).toMatchObject({
        status: 200,
        body: { workflow_id: first.body.workflow_id, started_at: first.body.started_at, already_running: true },
      });
      await suite.api.deps.temporal.workflow.getHandle(first.body.workflow_id).result();
    } finally {
      tool.delayMs = 0;
    }
  }, 60_000);

  test("another tenant gets 404 for the entity's incidents and on-call, and cannot sync the integration", async () => {
    const { token } = suite.adminB;
    for (const path of [`/entities/${payments.id}/incidents`, `/entities/${payments.id}/oncall`])
      expect((await call(token, 'GET', path)).status).toBe(404);
    expect((await call(token, 'POST', `/integrations/${incidentToolId}/sync`)).status).toBe(404);
    expect((await call(suite.adminA.token, 'GET', `/entities/${uniqueId('nobody')}/incidents`)).status).toBe(404);
  });
});

describe('what cannot sync', () => {
  test('a type without a sync and an inactive integration are 409s; an unknown one a 404', async () => {
    const custom = await call(suite.adminA.token, 'POST', '/integrations', { name: 'x', type: 'custom', config: {} });
    const refused = await call(suite.adminA.token, 'POST', `/integrations/${custom.body.id}/sync`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/custom integration has nothing to sync/);
    const paused = await call(suite.adminA.token, 'POST', '/integrations', {
      name: 'paused',
      type: 'incident-tool-a',
      config: { base_url: tool.url, token: tool.token },
    });
    await call(suite.adminA.token, 'PUT', `/integrations/${paused.body.id}`, { status: 'inactive' });
    const inactive = await call(suite.adminA.token, 'POST', `/integrations/${paused.body.id}/sync`);
    expect(inactive.status).toBe(409);
    expect(inactive.body.error.message).toMatch(/inactive/);
    expect((await call(suite.adminA.token, 'POST', `/integrations/${randomUUID()}/sync`)).status).toBe(404);
    // The schedule's list (read across tenants) leaves both out.
    const targets = (await syncTargets(system)).filter((t) => t.tenantId === suite.adminA.tenantId);
    expect(targets.map((t) => t.integrationId).sort()).toEqual([sourceHostId, incidentToolId].sort());
  });
});

describe('GET /integrations/configs', () => {
  test("lists the tenant's configurations with secrets masked and whether they sync; another tenant sees none of them", async () => {
    const res = await call(suite.adminA.token, 'GET', '/integrations/configs?limit=100');
    expect(res.status).toBe(200);
    const pager = res.body.configs.find((c: { id: string }) => c.id === incidentToolId);
    expect(pager).toEqual({
      id: incidentToolId,
      name: 'pager',
      type: 'incident-tool-a',
      status: 'active',
      config: { base_url: tool.url },
      secrets: ['token'],
      synced: true,
    });
    expect(res.body.configs.find((c: { type: string }) => c.type === 'custom')).toMatchObject({ synced: false });
    const other = await call(suite.adminB.token, 'GET', '/integrations/configs');
    expect(other.body.configs.map((c: { id: string }) => c.id)).not.toContain(incidentToolId);
    expect((await call(suite.adminA.token, 'GET', '/integrations/configs?cursor=nope')).status).toBe(400);
  });
});

describe("a tenant's share of a worker's syncs", () => {
  test('a third sync of one tenant at once waits its turn (retried), while another tenant syncs beside them', async () => {
    const config = testConfig();
    const clients = createWorkerClients(config, { poolMax: 4 });
    const activities = createIntegrationSyncActivities({
      ...clients,
      keyring: createKeyring(config),
      temporal: suite.api.deps.temporal,
    });
    const pager = (token: string) =>
      call(token, 'POST', '/integrations', {
        name: uniqueId('pager'),
        type: 'incident-tool-a',
        config: { base_url: tool.url, token: tool.token },
      });
    const [a2, a3, b1] = await Promise.all([
      pager(suite.adminA.token),
      pager(suite.adminA.token),
      pager(suite.adminB.token),
    ]);
    const ofA = [incidentToolId, a2.body.id, a3.body.id].map((integrationId) => ({
      tenantId: suite.adminA.tenantId,
      integrationId,
    }));
    tool.delayMs = 300;
    try {
      const outcomes = await Promise.allSettled(
        [...ofA, { tenantId: suite.adminB.tenantId, integrationId: b1.body.id }].map((target) =>
          activities.syncIntegration(target),
        ),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({
        type: 'SyncSlotsTaken',
        nonRetryable: false,
      });
      // The slots came back: the one refused syncs now.
      expect(await activities.syncIntegration(ofA[2])).toMatchObject({ status: 'active' });
    } finally {
      tool.delayMs = 0;
      await clients.close();
    }
  }, 30_000);
});
