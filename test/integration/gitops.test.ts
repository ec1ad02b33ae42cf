import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, type TestApi } from '../support/harness';
import { seedCluster, seedEntity, type SeededCluster } from '../support/clusterFixtures';

// GitOps over real HTTP: the agent's push (upsert, idempotency, gone), the command lifecycle
// between users and agents, who may call what, and tenant isolation.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let adminA: { token: string; tenantId: string };
let viewerA: { token: string };
let adminB: { token: string; tenantId: string };
let east: SeededCluster;
let west: SeededCluster;
let clusterB: SeededCluster;

const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

const resource = (name: string, extra: Record<string, unknown> = {}) => ({
  namespace: 'argocd',
  kind: 'Application',
  name,
  tool: 'argocd',
  sync_status: 'Synced',
  health_status: 'Healthy',
  revision: 'abc123',
  source_url: 'https://git.test/deploy.git',
  source_path: `apps/${name}`,
  ...extra,
});

const push = (cluster: SeededCluster, resources: unknown[], clusterId = cluster.clusterId) =>
  call(cluster.token, 'POST', '/k8s/gitops/push', { cluster_id: clusterId, resources });

async function listAll(token: string, query = ''): Promise<{ id: string; name: string; gone_at: string | null }[]> {
  const res = await call(token, 'GET', `/operations/gitops?limit=200${query}`);
  expect(res.status).toBe(200);
  return res.body.resources;
}

const idOf = async (name: string, token = viewerA.token) =>
  (await listAll(token, `&search=${name}`)).find((r) => r.name === name)!.id;

beforeAll(async () => {
  api = await startApi();
  adminA = await sessionToken({ tenant: `gitops-a-${run}`, email: 'admin@a.test', roles: ['admin'] });
  viewerA = await sessionToken({ tenant: `gitops-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
  adminB = await sessionToken({ tenant: `gitops-b-${run}`, email: 'admin@b.test', roles: ['admin'] });
  east = await seedCluster(api.deps.db, adminA.tenantId, 'east');
  west = await seedCluster(api.deps.db, adminA.tenantId, 'west');
  clusterB = await seedCluster(api.deps.db, adminB.tenantId, 'east');
});
afterAll(() => api?.close());

describe('POST /k8s/gitops/push', () => {
  test('upserts the full set, is idempotent, and marks what a later push leaves out as gone', async () => {
    const entityId = await seedEntity(api.deps.db, adminA.tenantId, `checkout-${run}`);
    const first = await push(east, [
      resource('checkout', { labels: { 'shipyard.dev/service-id': `checkout-${run}` } }),
      resource('billing'),
    ]);
    expect(first).toEqual({ status: 200, body: { received: 2, created: 2, updated: 0, gone: 0 } });
    const again = await push(east, [
      resource('checkout', { labels: { 'shipyard.dev/service-id': `checkout-${run}` } }),
      resource('billing'),
    ]);
    expect(again.body).toEqual({ received: 2, created: 0, updated: 2, gone: 0 });
    const listed = await listAll(viewerA.token, '&cluster=east');
    expect(listed.map((r) => r.name).sort()).toEqual(['billing', 'checkout']);
    const checkout = (await call(viewerA.token, 'GET', `/operations/gitops/${await idOf('checkout')}`)).body;
    expect(checkout.resource).toMatchObject({
      entity_id: entityId,
      sync_status: 'Synced',
      source_path: 'apps/checkout',
    });

    const changed = await push(east, [resource('checkout', { sync_status: 'OutOfSync' })]);
    expect(changed.body).toEqual({ received: 1, created: 0, updated: 1, gone: 1 });
    expect((await listAll(viewerA.token, '&cluster=east')).map((r) => r.name)).toEqual(['checkout']);
    const withGone = await listAll(viewerA.token, '&cluster=east&include_gone=true');
    expect(withGone.find((r) => r.name === 'billing')!.gone_at).not.toBeNull();
    const detail = (await call(viewerA.token, 'GET', `/operations/gitops/${await idOf('checkout')}`)).body;
    expect(detail.resource).toMatchObject({ sync_status: 'OutOfSync', entity_id: null, gone_at: null });

    // A resource pushed again comes back.
    expect((await push(east, [resource('checkout'), resource('billing')])).body).toMatchObject({ gone: 0 });
    expect((await listAll(viewerA.token, '&cluster=east')).map((r) => r.name).sort()).toEqual(['billing', 'checkout']);
  });

  test('a push for another cluster than the token’s is a 403 and changes nothing', async () => {
    const res = await push(east, [resource('sneaky')], 'west');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect((await listAll(viewerA.token)).map((r) => r.name)).not.toContain('sneaky');
  });

  test('a resource named twice is a 400, more than the configured maximum a 413', async () => {
    const twice = await push(west, [resource('dup'), resource('dup')]);
    expect(twice.status).toBe(400);
    const max = api.deps.config.operations.gitopsMaxResourcesPerPush;
    api.deps.config.operations.gitopsMaxResourcesPerPush = 2;
    try {
      const over = await push(west, [resource('a'), resource('b'), resource('c')]);
      expect(over.status).toBe(413);
      expect(over.body.error.message).toContain('SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH');
    } finally {
      api.deps.config.operations.gitopsMaxResourcesPerPush = max;
    }
  });

  test('a push larger than a general body (more items than any other array may hold) is taken whole, as an agent push', async () => {
    const bulk = await sessionToken({ tenant: `gitops-bulk-${run}`, email: 'admin@bulk.test', roles: ['admin'] });
    const cluster = await seedCluster(api.deps.db, bulk.tenantId, 'bulk');
    const many = Array.from({ length: api.deps.config.inputLimits.jsonArrayItems + 1 }, (_, i) => resource(`r${i}`));
    const res = await push(cluster, many);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: many.length });
  });

  test('a token whose cluster has no agent any more is a 404, not a 500', async () => {
    const gone = await seedCluster(api.deps.db, adminA.tenantId, 'decommissioned');
    await withTenant(api.deps.db, adminA.tenantId, (trx) =>
      trx('k8s_agents').where({ cluster_id: 'decommissioned' }).del(),
    );
    const res = await push(gone, [resource('orphan')]);
    expect(res.status).toBe(404);
  });

  test('user tokens are refused on the push, agent tokens on the user routes', async () => {
    const asUser = await call(adminA.token, 'POST', '/k8s/gitops/push', { cluster_id: 'east', resources: [] });
    expect(asUser.status).toBe(401);
    for (const path of ['/operations/gitops', '/operations/gitops/stats']) {
      expect((await call(east.token, 'GET', path)).status).toBe(401);
    }
    const id = await idOf('checkout');
    expect((await call(east.token, 'POST', `/operations/gitops/${id}/sync`)).status).toBe(401);
    expect((await call(adminA.token, 'GET', '/k8s/east/gitops/commands')).status).toBe(401);
    const report = { status: 'running' };
    expect((await call(adminA.token, 'PATCH', `/k8s/east/gitops/commands/${randomUUID()}`, report)).status).toBe(401);
  });
});

describe('commands', () => {
  test('sync and refresh queue a pending command (202, audited) that the cluster’s agent reads', async () => {
    const id = await idOf('checkout');
    const sync = await call(adminA.token, 'POST', `/operations/gitops/${id}/sync`);
    expect(sync.status).toBe(202);
    expect(sync.body.command).toMatchObject({
      action: 'sync',
      status: 'pending',
      cluster_id: 'east',
      resource_id: id,
      requested_by: 'admin@a.test',
    });
    const refresh = await call(adminA.token, 'POST', `/operations/gitops/${id}/refresh`);
    expect(refresh.body.command).toMatchObject({ action: 'refresh', status: 'pending' });

    const pending = await call(east.token, 'GET', '/k8s/east/gitops/commands');
    expect(pending.status).toBe(200);
    const mine = pending.body.commands.filter((c: { resource_id: string }) => c.resource_id === id);
    expect(mine.map((c: { id: string }) => c.id)).toEqual([sync.body.command.id, refresh.body.command.id]);
    expect(mine[0].resource).toEqual({ namespace: 'argocd', kind: 'Application', name: 'checkout' });
    expect((await call(west.token, 'GET', '/k8s/west/gitops/commands')).body.commands).toEqual([]);

    const audited = await withTenant(api.deps.db, adminA.tenantId, (trx) =>
      trx('audit_log').where({ target_id: id }).orderBy('id').select('event_type', 'actor'),
    );
    expect(audited).toEqual(
      expect.arrayContaining([
        { event_type: 'gitops.sync_requested', actor: 'admin@a.test' },
        { event_type: 'gitops.refresh_requested', actor: 'admin@a.test' },
      ]),
    );
    const detail = await call(viewerA.token, 'GET', `/operations/gitops/${id}`);
    expect(detail.body.commands.map((c: { id: string }) => c.id)).toEqual([
      refresh.body.command.id,
      sync.body.command.id,
    ]);
  });

  test('the agent moves a command pending → running → succeeded; any other move is a 409', async () => {
    const id = await idOf('checkout');
    const { command } = (await call(adminA.token, 'POST', `/operations/gitops/${id}/sync`)).body;
    const report = (status: string, message?: string) =>
      call(east.token, 'PATCH', `/k8s/east/gitops/commands/${command.id}`, { status, message });
    expect((await report('pending')).status).toBe(409);
    expect((await report('running')).body).toMatchObject({ status: 'running' });
    expect((await report('running')).status).toBe(409);
    expect((await report('pending')).status).toBe(409);
    expect((await report('succeeded', 'synced to abc123')).body).toMatchObject({
      status: 'succeeded',
      message: 'synced to abc123',
    });
    const finished = await report('failed');
    expect(finished.status).toBe(409);
    expect(finished.body.error.code).toBe('CONFLICT');
    const pending = (await call(east.token, 'GET', '/k8s/east/gitops/commands')).body.commands;
    expect(pending.map((c: { id: string }) => c.id)).not.toContain(command.id);

    // pending → failed directly
    const other = (await call(adminA.token, 'POST', `/operations/gitops/${id}/refresh`)).body.command;
    const failed = await call(east.token, 'PATCH', `/k8s/east/gitops/commands/${other.id}`, { status: 'failed' });
    expect(failed.body).toMatchObject({ status: 'failed', message: null });
  });

  test('another cluster’s commands are a 404 to an agent, in its path or by id', async () => {
    const id = await idOf('checkout');
    const { command } = (await call(adminA.token, 'POST', `/operations/gitops/${id}/sync`)).body;
    expect((await call(west.token, 'GET', '/k8s/east/gitops/commands')).status).toBe(404);
    const viaOwnPath = await call(west.token, 'PATCH', `/k8s/west/gitops/commands/${command.id}`, {
      status: 'running',
    });
    expect(viaOwnPath.status).toBe(404);
    const viaTheirPath = await call(west.token, 'PATCH', `/k8s/east/gitops/commands/${command.id}`, {
      status: 'running',
    });
    expect(viaTheirPath.status).toBe(404);
    // Another tenant's agent of a cluster with the same id.
    expect((await call(clusterB.token, 'GET', '/k8s/east/gitops/commands')).body.commands).toEqual([]);
    const otherTenant = await call(clusterB.token, 'PATCH', `/k8s/east/gitops/commands/${command.id}`, {
      status: 'running',
    });
    expect(otherTenant.status).toBe(404);
  });

  test('a gone resource cannot be synced (409); an unknown one is a 404', async () => {
    await push(west, [resource('short-lived')]);
    const id = await idOf('short-lived');
    await push(west, []);
    expect((await call(adminA.token, 'POST', `/operations/gitops/${id}/sync`)).status).toBe(409);
    expect((await call(adminA.token, 'POST', `/operations/gitops/${randomUUID()}/refresh`)).status).toBe(404);
  });

  test('viewers may read but not queue', async () => {
    const id = await idOf('checkout');
    expect((await call(viewerA.token, 'POST', `/operations/gitops/${id}/sync`)).status).toBe(403);
  });
});

describe('GET /operations/gitops/stats and paging', () => {
  test('counts present resources by sync status, health status, tool and cluster', async () => {
    await push(west, [
      resource('w1', { sync_status: 'OutOfSync', health_status: 'Degraded', tool: 'flux' }),
      resource('w2', { sync_status: null, health_status: null, tool: null }),
    ]);
    const stats = (await call(viewerA.token, 'GET', '/operations/gitops/stats')).body;
    const present = await listAll(viewerA.token);
    expect(stats.total).toBe(present.length);
    expect(stats.by_cluster).toEqual({ east: present.length - 2, west: 2 });
    expect(stats.by_tool).toMatchObject({ flux: 1, unknown: 1 });
    expect(stats.by_sync_status).toMatchObject({ OutOfSync: 1, unknown: 1 });
    expect(stats.by_health_status).toMatchObject({ Degraded: 1, unknown: 1 });
  });

  test('the name search is a prefix, whatever its case (names are lower-case), as the workload list’s', async () => {
    await push(east, [resource('checkout'), resource('billing')]);
    const found = await listAll(viewerA.token, '&search=CHECK');
    expect(found.map((r) => r.name)).toEqual(['checkout']);
  });

  test('pages through every resource once with next_cursor; a tampered cursor is a 400', async () => {
    const all = await listAll(viewerA.token, '&include_gone=true');
    const seen: string[] = [];
    let cursor = '';
    do {
      const res = await call(viewerA.token, 'GET', `/operations/gitops?limit=1&include_gone=true&cursor=${cursor}`);
      seen.push(...res.body.resources.map((r: { id: string }) => r.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.id));
    const tampered = Buffer.from(JSON.stringify({ v: 1, id: '["not-a-uuid"]' })).toString('base64url');
    expect((await call(viewerA.token, 'GET', `/operations/gitops?cursor=${tampered}`)).status).toBe(400);
  });
});

test('tenant isolation: another tenant sees none of these resources or commands', async () => {
  const id = await idOf('checkout');
  expect(await listAll(adminB.token, '&include_gone=true')).toEqual([]);
  expect((await call(adminB.token, 'GET', '/operations/gitops/stats')).body.total).toBe(0);
  expect((await call(adminB.token, 'GET', `/operations/gitops/${id}`)).status).toBe(404);
  expect((await call(adminB.token, 'POST', `/operations/gitops/${id}/sync`)).status).toBe(404);
  expect((await call(adminB.token, 'POST', `/operations/gitops/${id}/refresh`)).status).toBe(404);
  // Tenant B's agent of a cluster also named east writes only its own tenant's rows.
  expect((await push(clusterB, [resource('checkout')])).body).toMatchObject({ created: 1, gone: 0 });
  expect((await listAll(adminB.token)).map((r) => r.id)).not.toContain(id);
  expect((await call(viewerA.token, 'GET', `/operations/gitops/${id}`)).body.resource.gone_at).toBeNull();
});
