import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { seedCluster, seedDeployment, seedEntity, type SeededCluster } from '../support/clusterFixtures';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from '../support/harness';

// The operations views over real HTTP, on cluster data seeded as an agent's push leaves it:
// every view, shape D paging and cursor tampering, the entity sub-resources, who may call them,
// and tenant isolation.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let viewerA: { token: string; tenantId: string };
let viewerB: { token: string; tenantId: string };
let prod: SeededCluster;
let prodB: SeededCluster;
const entities: Record<string, string> = {};

const get = (path: string, token = viewerA.token): Promise<Reply> => callApi(api, token, 'GET', path);
const names = (items: { name: string }[]) => items.map((item) => item.name).sort();

/** Every item of a cursor-paged list, `limit` at a time. */
async function pageThrough(path: string, key: string, limit: number, token = viewerA.token) {
  const items: { id: string; name: string }[] = [];
  let cursor = '';
  const join = path.includes('?') ? '&' : '?';
  do {
    const res = await get(`${path}${join}limit=${limit}&cursor=${cursor}`, token);
    expect(res.status).toBe(200);
    expect(res.body[key].length).toBeLessThanOrEqual(limit);
    items.push(...res.body[key]);
    cursor = res.body.next_cursor;
  } while (cursor);
  return items;
}

beforeAll(async () => {
  api = await startApi();
  viewerA = await sessionToken({ tenant: `ops-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
  viewerB = await sessionToken({ tenant: `ops-b-${run}`, email: 'viewer@b.test', roles: ['viewer'] });
  const db = api.deps.db;
  await withTenant(db, viewerA.tenantId, (trx) =>
    trx('teams').insert({ tenant_id: viewerA.tenantId, name: 'Payments', slug: 'payments' }),
  );
  for (const [serviceId, owner] of [
    ['checkout', 'payments'],
    ['billing', 'payments'],
    ['search', 'discovery'],
  ])
    entities[serviceId] = await seedEntity(db, viewerA.tenantId, serviceId, owner);
  prod = await seedCluster(db, viewerA.tenantId, 'prod', {
    workloads: [
      {
        namespace: 'shop',
        name: 'checkout',
        replicas: 3,
        images: ['registry.test/checkout:1.2.0'],
        entity_id: entities.checkout,
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      },
      {
        namespace: 'shop',
        name: 'billing',
        replicas: 2,
        ready_replicas: 1,
        images: ['registry.test/billing:latest'],
        entity_id: entities.billing,
      },
      {
        namespace: 'data',
        kind: 'StatefulSet',
        name: 'cache',
        replicas: 2,
        ready_replicas: 0,
        first_seen_days_ago: 10,
      },
      {
        namespace: 'batch',
        kind: 'Job',
        name: 'old-job',
        replicas: 0,
        first_seen_days_ago: 30,
        entity_id: entities.search,
      },
      {
        namespace: 'shop',
        name: 'legacy',
        gone: true,
        first_seen_days_ago: 5,
        last_seen_days_ago: 2,
        entity_id: entities.checkout,
      },
      { namespace: 'shop', name: 'silent', first_seen_days_ago: 20, last_seen_days_ago: 9, entity_id: entities.search },
    ],
    flows: [
      { from: ['shop', 'checkout'], to: ['shop', 'billing'], port: 8080, count: 10 },
      { from: ['shop', 'billing'], to: ['data', 'cache'], port: 6379, count: 5 },
      { from: ['shop', 'checkout'], to: ['ext', 'payments-gw'], port: 443, count: 2 },
    ],
  });
  await seedCluster(db, viewerA.tenantId, 'staging', {
    workloads: [
      { namespace: 'shop', name: 'checkout', images: ['registry.test/checkout:1.3.0'], entity_id: entities.checkout },
    ],
  });
  prodB = await seedCluster(db, viewerB.tenantId, 'prod', {
    workloads: [{ namespace: 'shop', name: 'checkout' }],
    flows: [{ from: ['shop', 'checkout'], to: ['shop', 'checkout'], port: 1 }],
  });
  await seedDeployment(db, viewerA.tenantId, 'prod', prod.workloads.checkout, entities.checkout, {
    from: ['registry.test/checkout:1.1.0'],
    to: ['registry.test/checkout:1.2.0'],
  });
  const pushed = await callApi(api, prod.token, 'POST', '/k8s/gitops/push', {
    cluster_id: 'prod',
    resources: [{ namespace: 'shop', kind: 'Deployment', name: 'checkout', tool: 'argocd', sync_status: 'Synced' }],
  });
  expect(pushed.status).toBe(200);
});
afterAll(() => api?.close());

describe('/operations/workloads', () => {
  test('lists present workloads by name, filtered by cluster, namespace, kind and name prefix', async () => {
    const all = (await get('/operations/workloads')).body;
    expect(all.workloads.map((w: { name: string }) => w.name)).toEqual([
      'billing',
      'cache',
      'checkout',
      'checkout',
      'old-job',
      'silent',
    ]);
    expect(names((await get('/operations/workloads?cluster=staging')).body.workloads)).toEqual(['checkout']);
    expect(names((await get('/operations/workloads?namespace=data')).body.workloads)).toEqual(['cache']);
    expect(names((await get('/operations/workloads?kind=Job')).body.workloads)).toEqual(['old-job']);
    expect(names((await get('/operations/workloads?search=ch')).body.workloads)).toEqual(['checkout', 'checkout']);
    const withGone = (await get('/operations/workloads?include_gone=true&search=legacy')).body.workloads;
    expect(withGone).toMatchObject([{ name: 'legacy', status: 'gone' }]);
    const paged = await pageThrough('/operations/workloads?include_gone=true', 'workloads', 2);
    expect(paged.map((w) => w.name)).toEqual([
      'billing',
      'cache',
      'checkout',
      'checkout',
      'legacy',
      'old-job',
      'silent',
    ]);
  });

  test('stats count present workloads by status, kind, cluster and namespace', async () => {
    const stats = (await get('/operations/workloads/stats')).body;
    expect(stats).toEqual({
      total: 6,
      by_status: { healthy: 3, degraded: 1, unavailable: 1, scaled_to_zero: 1 },
      by_kind: { Deployment: 4, StatefulSet: 1, Job: 1 },
      by_cluster: { prod: 5, staging: 1 },
      by_namespace: { shop: 4, data: 1, batch: 1 },
      gone: 1,
      unowned: 1,
    });
  });

  test('image stats list the images by use and flag the unpinned ones', async () => {
    const stats = (await get('/operations/workloads/image-stats')).body;
    expect(stats).toMatchObject({ distinct_images: 6, unpinned_images: 1, unpinned_workloads: 1 });
    expect(stats.images).toContainEqual({
      image: 'registry.test/billing:latest',
      workloads: 1,
      clusters: 1,
      unpinned: true,
    });
    expect(stats.images).toContainEqual({
      image: 'registry.test/checkout:1.2.0',
      workloads: 1,
      clusters: 1,
      unpinned: false,
    });
  });

  test('replica stats sum desired and ready replicas and list the least available first', async () => {
    const stats = (await get('/operations/workloads/replica-stats')).body;
    expect(stats).toMatchObject({ workloads: 6, desired_replicas: 9, ready_replicas: 6, availability: 6 / 9 });
    expect(stats.most_unavailable.map((w: { name: string }) => w.name)).toEqual(['cache', 'billing']);
  });

  test('the network-policy signal counts workloads with ingress, egress or no flow, and cross-namespace flows', async () => {
    const stats = (await get('/operations/workloads/network-policy-stats')).body;
    expect(stats.by_cluster).toEqual({
      prod: { workloads: 5, with_ingress: 2, with_egress: 2, without_flows: 2, flows: 3, cross_namespace_flows: 2 },
      staging: { workloads: 1, with_ingress: 0, with_egress: 0, without_flows: 1, flows: 0, cross_namespace_flows: 0 },
    });
    expect(stats).toMatchObject({ workloads: 6, without_flows: 3, flows: 3, cross_namespace_flows: 2 });
  });

  test('one workload, its pods from its replica counts and its events from conditions and deployments', async () => {
    const id = prod.workloads.checkout;
    const workload = (await get(`/operations/workloads/${id}`)).body;
    expect(workload).toMatchObject({
      name: 'checkout',
      status: 'healthy',
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      entity: { id: entities.checkout, service_id: 'checkout', owner: 'payments' },
    });
    const billingPods = (await get(`/operations/workloads/${prod.workloads.billing}/pods`)).body;
    expect(billingPods).toMatchObject({ replicas: 2, ready_replicas: 1, truncated: false });
    expect(billingPods.pods.map((p: { name: string; ready: boolean }) => [p.name, p.ready])).toEqual([
      ['billing-0', true],
      ['billing-1', false],
    ]);
    expect((await get(`/operations/workloads/${prod.workloads.legacy}/pods`)).body.pods).toEqual([]);
    const events = (await get(`/operations/workloads/${id}/events`)).body.events;
    expect(events.map((e: { type: string }) => e.type).sort()).toEqual(['Condition', 'Deployed', 'FirstSeen']);
    expect(events.find((e: { type: string }) => e.type === 'Deployed').message).toBe(
      'registry.test/checkout:1.1.0 → registry.test/checkout:1.2.0',
    );
    const goneEvents = (await get(`/operations/workloads/${prod.workloads.legacy}/events`)).body.events;
    expect(goneEvents[0].type).toBe('Gone');
    for (const suffix of ['', '/pods', '/events'])
      expect((await get(`/operations/workloads/${randomUUID()}${suffix}`)).status).toBe(404);
  });
});

describe('/operations/zombies', () => {
  test('lists present workloads past the zombie age with their signals', async () => {
    const res = (await get('/operations/zombies?limit=200')).body;
    const byName = Object.fromEntries(res.zombies.map((z: { name: string; signals: string[] }) => [z.name, z.signals]));
    expect(byName).toEqual({ cache: ['unavailable', 'unowned'], 'old-job': ['scaled_to_zero'], silent: ['stale'] });
    expect(res.total).toBe(3);
    expect(res.zombie_age_seconds).toBe(7 * 86_400);
    expect(names((await get('/operations/zombies?signal=stale')).body.zombies)).toEqual(['silent']);
    expect(names(await pageThrough('/operations/zombies', 'zombies', 1))).toEqual(['cache', 'old-job', 'silent']);
  });
});

describe('/operations/clusters/{clusterId}', () => {
  test('network flows page through the cluster’s flows', async () => {
    const flows = await pageThrough('/operations/clusters/prod/network-flows', 'flows', 2);
    expect(flows).toHaveLength(3);
    expect(flows).toContainEqual(
      expect.objectContaining({
        source: { namespace: 'shop', name: 'billing' },
        destination: { namespace: 'data', name: 'cache' },
        port: 6379,
        protocol: 'TCP',
        count: 5,
      }),
    );
    expect((await get('/operations/clusters/staging/network-flows')).body).toEqual({ flows: [], next_cursor: '' });
  });

  test('topology: present workloads and external endpoints as nodes, flows as edges', async () => {
    const graph = (await get('/operations/clusters/prod/topology')).body;
    expect(graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual([
      'batch/old-job',
      'data/cache',
      'ext/payments-gw',
      'shop/billing',
      'shop/checkout',
      'shop/silent',
    ]);
    expect(graph.nodes.find((n: { id: string }) => n.id === 'ext/payments-gw')).toMatchObject({
      external: true,
      workload_id: null,
    });
    expect(graph.edges.map((e: { source: string; target: string }) => `${e.source}>${e.target}`)).toEqual([
      'shop/checkout>shop/billing',
      'shop/billing>data/cache',
      'shop/checkout>ext/payments-gw',
    ]);
    expect(graph.truncated).toBe(false);
  });

  test('stats: the agent and the counts of what it reported', async () => {
    const stats = (await get('/operations/clusters/prod/stats')).body;
    expect(stats).toMatchObject({
      cluster_id: 'prod',
      agent: { display_name: 'prod', node_count: 3 },
      workloads: {
        present: 5,
        gone: 1,
        namespaces: 3,
        by_status: { healthy: 2, degraded: 1, unavailable: 1, scaled_to_zero: 1 },
      },
      network: { flows: 3, traffic: 17 },
      gitops_resources: 1,
    });
  });

  test('a cluster the tenant has no agent for is a 404', async () => {
    for (const view of ['network-flows', 'topology', 'stats'])
      expect((await get(`/operations/clusters/nowhere/${view}`)).status).toBe(404);
  });
});

describe('/operations/resources (shape D)', () => {
  const resources = async (query = '') => (await get(`/operations/resources?limit=200${query}`)).body;

  test('each workload with its entity, team, GitOps resource, status and signals; every filter', async () => {
    const all = await resources();
    expect(all.total).toBe(6);
    expect(all.next_cursor).toBe('');
    const checkout = all.resources.find((r: { id: string }) => r.id === prod.workloads.checkout);
    expect(checkout).toMatchObject({
      status: 'healthy',
      signals: [],
      entity: { service_id: 'checkout', owner: 'payments' },
      gitops: { tool: 'argocd', sync_status: 'Synced' },
    });
    const filtered: [string, string[]][] = [
      ['&cluster=staging', ['checkout']],
      ['&team=payments', ['billing', 'checkout', 'checkout']],
      ['&kind=StatefulSet', ['cache']],
      ['&status=gone', ['legacy']],
      ['&status=degraded', ['billing']],
      ['&search=ch', ['checkout', 'checkout']],
      ['&signal=unowned', ['cache']],
      ['&has_gitops=true', ['checkout']],
      ['&has_gitops=false', ['billing', 'cache', 'checkout', 'old-job', 'silent']],
      ['&cluster=prod&team=payments&has_gitops=false', ['billing']],
    ];
    for (const [query, expected] of filtered) {
      const page = await resources(query);
      expect({ query, names: names(page.resources), total: page.total }).toEqual({
        query,
        names: expected,
        total: expected.length,
      });
    }
    const teamById = await withTenant(api.deps.db, viewerA.tenantId, (trx) =>
      trx('teams').where({ slug: 'payments' }).first('id'),
    );
    expect((await resources(`&team=${teamById.id}`)).total).toBe(3);
  });

  test('pages through every resource once, in order, with the total on each page', async () => {
    const all = (await resources()).resources.map((r: { id: string }) => r.id);
    let cursor = '';
    const seen: string[] = [];
    do {
      const page = (await get(`/operations/resources?limit=1&cursor=${cursor}`)).body;
      expect(page.total).toBe(6);
      seen.push(...page.resources.map((r: { id: string }) => r.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect((await get('/operations/resources')).body.resources).toHaveLength(6); // default limit 50
    expect((await get('/operations/resources?limit=201')).status).toBe(400);
    expect((await get('/operations/resources?limit=0')).status).toBe(400);
  });

  test('a tampered, foreign or unknown-version cursor is a 400', async () => {
    const issued = (await get('/operations/resources?limit=1')).body.next_cursor;
    expect(JSON.parse(Buffer.from(issued, 'base64url').toString())).toMatchObject({ v: 1 });
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bad = [
      'not base64!',
      // One character changed inside the envelope.
      `${issued.slice(0, 10)}${issued[10] === 'A' ? 'B' : 'A'}${issued.slice(11)}`,
      issued.slice(0, -2),
      encode({ v: 2, id: prod.workloads.checkout }),
      encode({ v: 1, id: 'not-an-id' }),
      encode({ v: 1, id: randomUUID() }),
      // A cursor of another list.
      (await get('/operations/workloads?limit=1')).body.next_cursor,
    ];
    for (const cursor of bad) {
      const res = await get(`/operations/resources?cursor=${encodeURIComponent(cursor)}`);
      expect({ cursor, status: res.status }).toEqual({ cursor, status: 400 });
    }
    // Tenant A's cursor in tenant B.
    expect((await get(`/operations/resources?cursor=${issued}`, viewerB.token)).status).toBe(400);
  });
});

describe('entity sub-resources', () => {
  test('instances, deployments, resources and zombies of one entity', async () => {
    const instances = (await get('/entities/checkout/k8s/workloads')).body.instances;
    expect(instances).toEqual([
      expect.objectContaining({
        cluster_id: 'prod',
        name: 'checkout',
        image: 'registry.test/checkout:1.2.0',
        replicas: 3,
      }),
      expect.objectContaining({ cluster_id: 'staging', name: 'checkout', image: 'registry.test/checkout:1.3.0' }),
    ]);
    const deployments = (await get(`/entities/${entities.checkout}/deployments`)).body.deployments;
    expect(deployments).toMatchObject([
      {
        cluster_id: 'prod',
        workload: { id: prod.workloads.checkout, name: 'checkout' },
        previous_images: ['registry.test/checkout:1.1.0'],
        images: ['registry.test/checkout:1.2.0'],
      },
    ]);
    const resources = (await get('/entities/checkout/resources')).body;
    expect({ names: names(resources.resources), total: resources.total }).toEqual({
      names: ['checkout', 'checkout'],
      total: 2,
    });
    expect(names((await get('/entities/checkout/resources?status=gone')).body.resources)).toEqual(['legacy']);
    expect((await get('/entities/checkout/zombies')).body).toMatchObject({ zombies: [], total: 0 });
    expect(names((await get('/entities/search/zombies')).body.zombies)).toEqual(['old-job', 'silent']);
  });

  test('an unknown entity is a 404 on each', async () => {
    for (const view of ['k8s/workloads', 'deployments', 'resources', 'zombies'])
      expect((await get(`/entities/no-such-service/${view}`)).status).toBe(404);
  });
});

const USER_VIEWS = [
  '/operations/workloads',
  '/operations/workloads/stats',
  '/operations/workloads/image-stats',
  '/operations/workloads/replica-stats',
  '/operations/workloads/network-policy-stats',
  '/operations/zombies',
  '/operations/resources',
  '/operations/clusters/prod/network-flows',
  '/operations/clusters/prod/topology',
  '/operations/clusters/prod/stats',
  '/entities/checkout/k8s/workloads',
  '/entities/checkout/deployments',
  '/entities/checkout/resources',
  '/entities/checkout/zombies',
];

test('an agent token is refused on every view (401); a viewer reads them all', async () => {
  const workload = prod.workloads.checkout;
  const paths = [...USER_VIEWS, ...['', '/pods', '/events'].map((s) => `/operations/workloads/${workload}${s}`)];
  for (const path of paths) {
    expect({ path, status: (await get(path, prod.token)).status }).toEqual({ path, status: 401 });
    expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 });
  }
});

test('tenant isolation: another tenant sees only its own cluster data, and 404 for the rest', async () => {
  const b = (path: string) => get(path, viewerB.token);
  expect(names((await b('/operations/workloads?include_gone=true')).body.workloads)).toEqual(['checkout']);
  expect((await b('/operations/workloads/stats')).body).toMatchObject({ total: 1, by_cluster: { prod: 1 }, gone: 0 });
  expect((await b('/operations/workloads/image-stats')).body.distinct_images).toBe(1);
  expect((await b('/operations/workloads/replica-stats')).body.workloads).toBe(1);
  expect(Object.keys((await b('/operations/workloads/network-policy-stats')).body.by_cluster)).toEqual(['prod']);
  // Its own workload belongs to no entity but is younger than the zombie age.
  expect((await b('/operations/zombies')).body.total).toBe(0);
  expect((await b('/operations/resources')).body.total).toBe(1);
  expect((await b('/operations/clusters/prod/network-flows')).body.flows).toHaveLength(1);
  expect((await b('/operations/clusters/prod/stats')).body.workloads.present).toBe(1);
  expect((await b('/operations/clusters/prod/topology')).body.nodes.map((n: { id: string }) => n.id)).toEqual([
    'shop/checkout',
  ]);
  expect((await b('/operations/clusters/staging/stats')).status).toBe(404);
  for (const suffix of ['', '/pods', '/events'])
    expect((await b(`/operations/workloads/${prod.workloads.checkout}${suffix}`)).status).toBe(404);
  for (const view of ['k8s/workloads', 'deployments', 'resources', 'zombies'])
    expect((await b(`/entities/${entities.checkout}/${view}`)).status).toBe(404);
  expect(prodB.workloads.checkout).not.toBe(prod.workloads.checkout);
});
