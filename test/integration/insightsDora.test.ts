import { randomUUID } from 'node:crypto';
import { createEgressClient } from '../../core/egress/egressClient';
import { parseEgressAllow } from '../../core/egress/egressRules';
import { syncIncidentTool } from '../../core/incidents/sync';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';
import { startFakeIncidentTool, type FakeIncidentTool } from '../support/fakeIncidentTool';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { forgeCaller } from '../support/forgeRuns';
import { startWorkers, testConfig, type TestWorkers } from '../support/harness';
import { useSearchIndex } from '../support/searchIndex';

// GET /insights/dora on histories built through the API and the fakes: agent pushes whose image
// changes are deployments, runs of a deploying mold, commits the crawl fetches from the fake
// source host, incidents from the fake incident tool's sync. Each
// figure and band at the entity, team and tenant scopes; null with the reason for a missing
// source or nothing to measure; the query's 400s and 404s; the tenant boundary.

jest.setTimeout(120_000);
const { suite, call, uniqueId, createEntity } = useCatalogSuite();
useSearchIndex();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const egress = createEgressClient(parseEgressAllow(testConfig().egressAllow));
let tool: FakeIncidentTool;
let host: FakeSourceHost;
let workers: TestWorkers;

beforeAll(async () => {
  [tool, host, workers] = await Promise.all([
    startFakeIncidentTool(),
    startFakeSourceHost(),
    startWorkers(['forge', 'search']),
  ]);
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await Promise.all([tool?.close(), host?.close()]);
});

const dora = (token: string, query = '') => call(token, 'GET', `/insights/dora${query}`);

const inTenantA = <T>(work: Parameters<typeof withTenant<T>>[2]) =>
  withTenant(suite.api.deps.db, suite.adminA.tenantId, work);

/** A reason's code for each figure, in the response's order. */
const reasons = (body: Record<string, { reason: { code: string } | null }>) =>
  ['deployment_frequency', 'lead_time_for_changes', 'change_failure_rate', 'time_to_restore_service'].map(
    (metric) => body[metric].reason?.code ?? null,
  );

describe('the query', () => {
  test('a window other than 7d, 30d, 90d, or both entity_id and team_id, is a 400; an unknown entity or team a 404', async () => {
    expect((await dora(suite.adminA.token, '?window=1d')).status).toBe(400);
    const both = await dora(suite.adminA.token, `?entity_id=${randomUUID()}&team_id=${randomUUID()}`);
    expect(both).toMatchObject({ status: 400, body: { error: { code: 'INVALID_REQUEST' } } });
    expect((await dora(suite.adminA.token, `?entity_id=${randomUUID()}`)).status).toBe(404);
    expect((await dora(suite.adminA.token, '?team_id=no-such-team')).status).toBe(404);
  });
});

describe('missing sources', () => {
  test('a tenant with no agent, no deploying mold and no incident tool has every figure null with its reason', async () => {
    const res = await dora(suite.adminB.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scope: { kind: 'tenant', id: null }, window: '30d' });
    expect(reasons(res.body)).toEqual([
      'no_deployment_source',
      'no_deployment_source',
      'no_deployment_source',
      'no_incident_source',
    ]);
    for (const metric of ['deployment_frequency', 'change_failure_rate', 'time_to_restore_service'])
      expect(res.body[metric]).toMatchObject({ value: null, band: null });
  });
});

describe('a history of deployments and incidents', () => {
  const serviceKey = uniqueId('PSVC');
  const teamSlug = uniqueId('payments-team');
  let payments: string;
  let ledger: string;
  let teamId: string;
  let now: number;

  /** Deployments of the entity's workload, oldest first, moved to `ages` (ms before now) behind the API. */
  async function backdateDeployments(entityId: string, ages: number[]) {
    await inTenantA(async (trx) => {
      const rows = await trx('k8s_deployments').where({ entity_id: entityId }).orderBy('deployed_at').select('id');
      expect(rows).toHaveLength(ages.length);
      for (const [i, row] of rows.entries())
        await trx('k8s_deployments')
          .where({ id: row.id })
          .update({ deployed_at: new Date(now - ages[i]) });
    });
  }

  /** Commits of acme/payments: a sha of one repeated digit, committed `ago` ms before now. */
  const commits = { c1: 5 * HOUR, c2: 3 * HOUR, c3: 10 * HOUR, c4: HOUR };
  const shaOf = (name: keyof typeof commits) => name.slice(1).repeat(40);

  beforeAll(async () => {
    now = Date.now();
    // Each commit's age is before the deployment that carries it: c1 by one 9 days ago (before a
    // 7-day window), c2 by the next (6 days ago), c3 by the one 4 days ago, c4 by the last (2 hours ago).
    const committedAt = { c1: 9 * DAY, c2: 6 * DAY, c3: 4 * DAY, c4: 2 * HOUR };
    host.repositories.add('acme/payments');
    host.commits.set(
      'acme/payments',
      (Object.keys(commits) as (keyof typeof commits)[]).map((name) => ({
        sha: shaOf(name),
        author_name: 'Ann',
        author_email: 'ann@a.test',
        committed_at: new Date(now - committedAt[name] - commits[name]),
        additions: 1,
        deletions: 0,
      })),
    );
    const sourceHost = await call(suite.adminA.token, 'POST', '/integrations', {
      name: 'source host',
      type: 'vcs-host-a',
      config: { base_url: host.url, token: host.token },
    });
    expect(sourceHost.status).toBe(201);

    const team = await call(suite.adminA.token, 'POST', '/admin/teams', { name: 'Payments', slug: teamSlug });
    expect(team.status).toBe(201);
    teamId = team.body.id;
    payments = (
      await createEntity({
        service_id: uniqueId('payments'),
        name: 'payments',
        owner: teamSlug,
        tags: [`incident-tool-a/service-id=${serviceKey}`],
        links: [{ title: 'code', url: `${host.url}/acme/payments` }],
      })
    ).id;
    const recrawl = await call(suite.adminA.token, 'POST', '/admin/recrawl');
    expect(recrawl.status).toBe(202);
    await suite.api.deps.temporal.workflow.getHandle(recrawl.body.operation_id).result();
    const ledgerEntity = await createEntity({ service_id: uniqueId('ledger'), name: 'ledger' });
    ledger = ledgerEntity.id;
    const paymentsServiceId = (await call(suite.adminA.token, 'GET', `/entities/${payments}`)).body.service_id;

    // The agent: a first push, then three image changes of payments' workload (tagged with the
    // commit they deploy: a 7-digit prefix, a full sha, a prefix) and one of ledger's.
    const clusterId = uniqueId('cluster');
    const registered = await call(suite.adminA.token, 'POST', '/k8s/agents/register', {
      cluster_id: clusterId,
      display_name: clusterId,
    });
    expect(registered.status).toBe(201);
    const workload = (name: string, serviceId: string, tag: string) => ({
      namespace: 'default',
      kind: 'Deployment',
      name,
      labels: { 'shipyard.dev/service-id': serviceId },
      replicas: 1,
      ready_replicas: 1,
      images: [`registry.test/${name}:${tag}`],
    });
    for (const [paymentsTag, ledgerTag] of [
      ['v1', 'v1'],
      [shaOf('c1').slice(0, 7), 'v1'],
      [shaOf('c2').slice(0, 7), 'v1'],
      [shaOf('c3'), 'v1'],
      [shaOf('c4').slice(0, 12), 'v2'],
    ]) {
      const pushed = await call(registered.body.token, 'POST', '/k8s/agents/push', {
        cluster_id: clusterId,
        workloads: [
          workload('payments', paymentsServiceId, paymentsTag),
          workload('ledger', ledgerEntity.service_id, ledgerTag),
        ],
      });
      expect(pushed.status).toBe(200);
    }
    await backdateDeployments(payments, [9 * DAY, 6 * DAY, 4 * DAY, 2 * HOUR]);

    // A deploying mold: one completed run for payments (five days ago) naming c1, which an earlier
    // deployment already carried (a rollback: it carries nothing), and one failed run.
    const forge = forgeCaller(suite.api, suite.adminA.token);
    const parameters = [
      { name: 'entity_id', type: 'string' },
      { name: 'commit', type: 'string' },
    ];
    const deploying = await forge.createMold({ deploys: true, parameters, actions: [] });
    expect(deploying.deploys).toBe(true);
    const failing = await forge.createMold({
      deploys: true,
      parameters,
      actions: [{ name: 'fail', type: 'script', config: { script: 'exit 1' } }],
    });
    const completed = await forge.startRun(deploying.slug, { entity_id: payments, commit: shaOf('c1') });
    const failed = await forge.startRun(failing.slug, { entity_id: payments });
    expect((await forge.finished(completed.id)).status).toBe('completed');
    expect((await forge.finished(failed.id)).status).toBe('failed');
    await inTenantA((trx) =>
      trx('runs')
        .where({ id: completed.id })
        .update({ finished_at: new Date(now - 5 * DAY) }),
    );

    // Incidents: one an hour after the first deployment (restored in 2 h), one 30 h after the
    // second (restored in 30 min, too late to fail it), one open an hour after the third.
    const integration = await call(suite.adminA.token, 'POST', '/integrations', {
      name: 'pager',
      type: 'incident-tool-a',
      config: { base_url: tool.url, token: tool.token },
    });
    expect(integration.status).toBe(201);
    const iso = (ago: number) => new Date(now - ago).toISOString();
    tool.services.set(serviceKey, { name: 'payments' });
    tool.incidents.set(serviceKey, [
      {
        id: 'I1',
        title: 'errors',
        status: 'resolved',
        created_at: iso(6 * DAY - HOUR),
        resolved_at: iso(6 * DAY - 3 * HOUR),
      },
      {
        id: 'I2',
        title: 'slow',
        status: 'resolved',
        created_at: iso(4 * DAY - 30 * HOUR),
        resolved_at: iso(4 * DAY - 30.5 * HOUR),
      },
      { id: 'I3', title: 'down', status: 'triggered', created_at: iso(HOUR) },
    ]);
    await syncIncidentTool({ db: suite.api.deps.db, egress, lookbackMs: 90 * DAY }, suite.adminA.tenantId, {
      id: integration.body.id,
      config: { base_url: tool.url, token: tool.token },
    });
  }, 120_000);

  test('an entity: 4 deployments in 7 days (3 by the agent, 1 run; a failed run is none), commits carried after 3, 10 and 1 h (c1 went out before the window), 2 deployments followed by an incident, restores of 2 h and 30 min', async () => {
    const res = await dora(suite.adminA.token, `?entity_id=${payments}&window=7d`);
    expect(res.status).toBe(200);
    expect(res.body.scope).toEqual({ kind: 'entity', id: payments });
    expect(res.body.deployment_frequency).toEqual({
      value: 4 / 7,
      unit: 'deployments_per_day',
      band: 'high',
      reason: null,
      sources: { agent_deployments: 3, forge_deployments: 1, failed_forge_runs: 1, deployments: 4 },
    });
    expect(res.body.change_failure_rate).toEqual({
      value: 50,
      unit: 'percent',
      band: 'low',
      reason: null,
      sources: { deployments: 4, failed_deployments: 2, failure_window_hours: 24 },
    });
    expect(res.body.time_to_restore_service).toEqual({
      value: 1.25,
      unit: 'hours',
      band: 'high',
      reason: null,
      sources: { resolved_incidents: 2 },
    });
    // Lead times of c2, c3, c4: 3, 10 and 1 hours; the deployment before the window carried c1.
    expect(res.body.lead_time_for_changes).toEqual({
      value: 3,
      unit: 'hours',
      band: 'elite',
      reason: null,
      sources: { deployments_naming_commits: 4, commits_deployed: 3, truncated: false },
    });
  });

  test('over 30 days the deployment 9 days ago counts too: 5 deployments a high frequency, and c1 carried after 5 h', async () => {
    const res = await dora(suite.adminA.token, `?entity_id=${payments}&window=30d`);
    expect(res.body.deployment_frequency).toMatchObject({ value: 5 / 30, band: 'high' });
    expect(res.body.lead_time_for_changes).toMatchObject({ value: 4, sources: { commits_deployed: 4 } });
  });

  test('an entity with deployments and no incident: 0% failed (elite), and no resolved incident to time', async () => {
    const res = await dora(suite.adminA.token, `?entity_id=${ledger}&window=7d`);
    expect(res.body.deployment_frequency).toMatchObject({ value: 1 / 7, band: 'high' });
    expect(res.body.change_failure_rate).toMatchObject({ value: 0, band: 'elite' });
    expect(res.body.time_to_restore_service).toMatchObject({
      value: null,
      band: null,
      reason: { code: 'no_resolved_incidents' },
    });
  });

  test("a team's figures are its entities' (payments), the tenant's all of them (payments and ledger)", async () => {
    const team = await dora(suite.adminA.token, `?team_id=${teamSlug}&window=7d`);
    expect(team.body.scope).toEqual({ kind: 'team', id: teamId });
    expect(team.body.deployment_frequency.sources.deployments).toBe(4);
    expect(team.body.change_failure_rate.value).toBe(50);
    expect(team.body.lead_time_for_changes.value).toBe(3);
    const tenant = await dora(suite.adminA.token, '?window=7d');
    expect(tenant.body.deployment_frequency).toMatchObject({ value: 5 / 7, sources: { deployments: 5 } });
    expect(tenant.body.change_failure_rate).toMatchObject({ value: 40, sources: { failed_deployments: 2 } });
    expect(tenant.body.time_to_restore_service).toMatchObject({ value: 1.25, sources: { resolved_incidents: 2 } });
    // Ledger's image tags name no commit.
    expect(tenant.body.lead_time_for_changes).toMatchObject({ value: 3, sources: { deployments_naming_commits: 4 } });
  });

  test("another tenant gets 404 for this tenant's entity and team, and none of its figures", async () => {
    expect((await dora(suite.adminB.token, `?entity_id=${payments}`)).status).toBe(404);
    expect((await dora(suite.adminB.token, `?team_id=${teamId}`)).status).toBe(404);
    expect(reasons((await dora(suite.adminB.token)).body)[0]).toBe('no_deployment_source');
  });
});

test('agents connected and no deployment in the window: a real 0 a day (low), and no deployment to rate', async () => {
  const clusterId = uniqueId('quiet');
  const registered = await call(suite.adminB.token, 'POST', '/k8s/agents/register', {
    cluster_id: clusterId,
    display_name: clusterId,
  });
  expect(registered.status).toBe(201);
  const integration = await call(suite.adminB.token, 'POST', '/integrations', {
    name: 'pager',
    type: 'incident-tool-a',
    config: { base_url: tool.url, token: tool.token },
  });
  expect(integration.status).toBe(201);
  const res = await dora(suite.adminB.token, '?window=90d');
  expect(res.body.deployment_frequency).toMatchObject({ value: 0, band: 'low', reason: null });
  expect(reasons(res.body)).toEqual([null, 'no_commit_source', 'no_deployments', 'no_resolved_incidents']);
});
