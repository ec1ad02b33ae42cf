import { useAgentsSuite, type Cluster } from '../support/agentsSuite';
import { jsonOf } from '../support/harness';
import { useSearchIndex } from '../support/searchIndex';

// An agent's push over real HTTP: the full snapshot upserted, idempotent, gone and returning
// workloads, entity matching and creation, deployments from image changes, budgets, isolation.

const { suite, call, newCluster, inTenant } = useAgentsSuite();
const { drainAll, indexed } = useSearchIndex();

interface Workload {
  namespace: string;
  kind: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  images?: string[];
  [field: string]: unknown;
}

const deployment = (name: string, fields: Partial<Workload> = {}): Workload => ({
  namespace: 'default',
  kind: 'Deployment',
  name,
  labels: {},
  annotations: {},
  replicas: 2,
  ready_replicas: 2,
  images: [`registry.test/${name}:1`],
  conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
  ...fields,
});

const push = (cluster: Cluster, workloads: Workload[]) =>
  call(cluster.agentToken, 'POST', '/k8s/agents/push', { cluster_id: cluster.clusterId, workloads });

const workloadRows = (cluster: Cluster) =>
  inTenant(cluster.admin.tenantId, (trx) =>
    trx('k8s_workloads').where({ cluster_id: cluster.clusterId }).orderBy('name').select(),
  );

const entityOf = (cluster: Cluster, serviceId: string) =>
  inTenant(cluster.admin.tenantId, (trx) => trx('entities').where({ service_id: serviceId }).first());

describe('the snapshot', () => {
  test('a first push creates every workload with what the agent reported', async () => {
    const cluster = await newCluster('create');
    const res = await push(cluster, [deployment('api'), deployment('worker', { kind: 'StatefulSet', replicas: 1 })]);
    expect(res).toEqual({ status: 200, body: { received: 2, created: 2, updated: 0, gone: 0, deployments: 0 } });
    const rows = await workloadRows(cluster);
    expect(rows).toEqual([
      expect.objectContaining({
        namespace: 'default',
        kind: 'Deployment',
        name: 'api',
        replicas: 2,
        ready_replicas: 2,
        images: ['registry.test/api:1'],
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
        gone_at: null,
      }),
      expect.objectContaining({ kind: 'StatefulSet', name: 'worker', replicas: 1 }),
    ]);
    const agent = (await call(cluster.admin.token, 'GET', `/k8s/agents/${cluster.clusterId}`)).body;
    expect(agent.workload_count).toBe(2);
  });

  test('the same push twice rewrites nothing; a workload last seen over a minute ago only has last_seen_at moved', async () => {
    const cluster = await newCluster('idempotent');
    const workloads = [deployment('api'), deployment('web')];
    await push(cluster, workloads);
    const before = await workloadRows(cluster);
    const again = await push(cluster, workloads);
    expect(again.body).toEqual({ received: 2, created: 0, updated: 0, gone: 0, deployments: 0 });
    expect(await workloadRows(cluster)).toEqual(before);

    await inTenant(cluster.admin.tenantId, (trx) =>
      trx('k8s_workloads').update({ last_seen_at: trx.raw("now() - interval '2 minutes'") }),
    );
    const later = await push(cluster, workloads);
    expect(later.body).toEqual({ received: 2, created: 0, updated: 0, gone: 0, deployments: 0 });
    const after = await workloadRows(cluster);
    const withoutSeen = (rows: { last_seen_at: Date }[]) => rows.map(({ last_seen_at: _seen, ...rest }) => rest);
    expect(withoutSeen(after)).toEqual(withoutSeen(before));
    expect(after.every((row: { last_seen_at: Date }) => Date.now() - row.last_seen_at.getTime() < 60_000)).toBe(true);
  });

  test('a changed workload counts as updated', async () => {
    const cluster = await newCluster('updated');
    await push(cluster, [deployment('api'), deployment('web')]);
    const res = await push(cluster, [deployment('api', { ready_replicas: 1 }), deployment('web')]);
    expect(res.body).toMatchObject({ created: 0, updated: 1 });
  });

  test('workloads left out of a push are marked gone; pushed again, they return', async () => {
    const cluster = await newCluster('gone');
    await push(cluster, [deployment('api'), deployment('web')]);
    const dropped = await push(cluster, [deployment('api')]);
    expect(dropped.body).toEqual({ received: 1, created: 0, updated: 0, gone: 1, deployments: 0 });
    const [api, web] = await workloadRows(cluster);
    expect(api.gone_at).toBeNull();
    expect(web.gone_at).toBeInstanceOf(Date);
    expect((await call(cluster.admin.token, 'GET', `/k8s/agents/${cluster.clusterId}`)).body.workload_count).toBe(1);
    // Gone already: not counted again.
    expect((await push(cluster, [deployment('api')])).body.gone).toBe(0);

    const back = await push(cluster, [deployment('api'), deployment('web')]);
    expect(back.body).toEqual({ received: 2, created: 0, updated: 1, gone: 0, deployments: 0 });
    expect((await workloadRows(cluster))[1].gone_at).toBeNull();
  });

  test('an empty push marks every workload of the cluster gone', async () => {
    const cluster = await newCluster('empty');
    await push(cluster, [deployment('api'), deployment('web')]);
    expect((await push(cluster, [])).body).toMatchObject({ received: 0, gone: 2 });
  });
});

describe('entities', () => {
  test('the shipyard.dev/service-id label names the entity; an unknown one is created as a kubernetes service', async () => {
    const cluster = await newCluster('label');
    await push(cluster, [
      deployment('api-v2', { labels: { 'shipyard.dev/service-id': 'payments', 'app.kubernetes.io/name': 'other' } }),
    ]);
    const entity = await entityOf(cluster, 'payments');
    expect(entity).toMatchObject({ service_id: 'payments', name: 'payments', type: 'service', source: 'kubernetes' });
    expect(await entityOf(cluster, 'other')).toBeUndefined();
    expect((await workloadRows(cluster))[0].entity_id).toBe(entity.id);
  });

  test('the annotation names the entity when no label does; app.kubernetes.io/name is the fallback', async () => {
    const cluster = await newCluster('annotation');
    await push(cluster, [
      deployment('a', { annotations: { 'shipyard.dev/service-id': 'from-annotation' } }),
      deployment('b', { labels: { 'app.kubernetes.io/name': 'from-app-name' } }),
    ]);
    const [a, b] = await workloadRows(cluster);
    expect(a.entity_id).toBe((await entityOf(cluster, 'from-annotation')).id);
    expect(b.entity_id).toBe((await entityOf(cluster, 'from-app-name')).id);
  });

  test('an existing entity is linked, not recreated, and its last_activity_at moves to the push', async () => {
    const cluster = await newCluster('existing');
    const created = await call(cluster.admin.token, 'POST', '/entities', {
      service_id: 'checkout',
      name: 'Checkout',
      type: 'api',
    });
    expect(created.status).toBe(201);
    await inTenant(cluster.admin.tenantId, (trx) =>
      trx('entities')
        .where({ service_id: 'checkout' })
        .update({ last_activity_at: new Date('2026-01-01T00:00:00Z') }),
    );
    await push(cluster, [deployment('checkout', { labels: { 'app.kubernetes.io/name': 'checkout' } })]);
    const entity = await entityOf(cluster, 'checkout');
    expect(entity).toMatchObject({ id: created.body.id, name: 'Checkout', type: 'api', source: 'api' });
    expect(entity.last_activity_at.getTime()).toBeGreaterThan(new Date('2026-11-01T00:00:00Z').getTime());
    expect((await workloadRows(cluster))[0].entity_id).toBe(created.body.id);
  });

  test('a steady push leaves its entities alone for a minute; a new workload or an image change touches them at once', async () => {
    const cluster = await newCluster('touch');
    const labels = { 'shipyard.dev/service-id': 'steady' };
    await push(cluster, [deployment('steady', { labels })]);
    const entity = await entityOf(cluster, 'steady');
    const queued = async () =>
      Number(
        (
          await inTenant(cluster.admin.tenantId, (trx) =>
            trx('search_outbox').where({ document_id: entity.id }).count<{ count: string }[]>('*'),
          )
        )[0].count,
      );
    const before = await queued();
    await push(cluster, [deployment('steady', { labels })]);
    expect(await queued()).toBe(before);
    expect((await entityOf(cluster, 'steady')).last_activity_at).toEqual(entity.last_activity_at);
    // Still linked, though not rewritten.
    expect((await workloadRows(cluster))[0].entity_id).toBe(entity.id);

    await push(cluster, [deployment('steady', { labels, images: ['steady:2'] })]);
    expect(await queued()).toBe(before + 1);
    await push(cluster, [deployment('steady', { labels, images: ['steady:2'] }), deployment('steady-2', { labels })]);
    expect(await queued()).toBe(before + 2);

    // A minute on, a steady push touches it again.
    await inTenant(cluster.admin.tenantId, (trx) =>
      trx('entities')
        .where({ id: entity.id })
        .update({ last_activity_at: trx.raw(`now() - interval '61 seconds'`) }),
    );
    const aged = await queued();
    await push(cluster, [deployment('steady', { labels, images: ['steady:2'] }), deployment('steady-2', { labels })]);
    expect(await queued()).toBe(aged + 1);
  });

  test('a name that is not a valid service id links no entity and creates none', async () => {
    const cluster = await newCluster('invalid-name');
    await push(cluster, [deployment('x', { labels: { 'app.kubernetes.io/name': 'My_App' } }), deployment('y')]);
    const rows = await workloadRows(cluster);
    expect(rows.map((row) => row.entity_id)).toEqual([null, null]);
    const count = await inTenant(cluster.admin.tenantId, (trx) => trx('entities').count<{ count: string }[]>('*'));
    expect(Number(count[0].count)).toBe(0);
  });

  test('matched entities are queued for reindexing through the search outbox', async () => {
    const cluster = await newCluster('outbox');
    await push(cluster, [deployment('api', { labels: { 'shipyard.dev/service-id': 'indexed' } })]);
    const entity = await entityOf(cluster, 'indexed');
    const queued = await inTenant(cluster.admin.tenantId, (trx) =>
      trx('search_outbox').where({ collection: 'entities', document_id: entity.id }).count<{ count: string }[]>('*'),
    );
    expect(Number(queued[0].count)).toBeGreaterThan(0);
  });
});

describe('search', () => {
  test('the entity’s search document carries the clusters, namespaces and images agents reported, until they are gone', async () => {
    const cluster = await newCluster('search');
    const labels = { 'shipyard.dev/service-id': 'searchable' };
    await push(cluster, [
      deployment('searchable', { labels, images: ['searchable:1', 'sidecar:2'] }),
      deployment('searchable-worker', { namespace: 'jobs', labels, images: ['searchable:1'] }),
    ]);
    const entity = await entityOf(cluster, 'searchable');
    await drainAll();
    const document = await indexed('entities', entity.id);
    expect(document).toMatchObject({ key: 'searchable', collection: 'entities' });
    expect(document?.kubernetes).toEqual({
      clusters: [cluster.clusterId],
      namespaces: ['default', 'jobs'],
      images: ['searchable:1', 'sidecar:2'],
    });

    // The workloads leave: the entity, though not pushed, is reindexed without them.
    await push(cluster, []);
    await drainAll();
    expect(await indexed('entities', entity.id)).not.toHaveProperty('kubernetes');
  });
});

describe('deployments', () => {
  test('an image change between pushes is recorded as a deployment of the entity; the same images are not', async () => {
    const cluster = await newCluster('deploy');
    const labels = { 'shipyard.dev/service-id': 'orders' };
    await push(cluster, [deployment('orders', { labels, images: ['orders:1'] })]);
    const changed = await push(cluster, [deployment('orders', { labels, images: ['orders:2'] })]);
    expect(changed.body).toMatchObject({ updated: 1, deployments: 1 });
    expect((await push(cluster, [deployment('orders', { labels, images: ['orders:2'] })])).body.deployments).toBe(0);
    const entity = await entityOf(cluster, 'orders');
    const deployments = await inTenant(cluster.admin.tenantId, (trx) => trx('k8s_deployments').select());
    expect(deployments).toEqual([
      expect.objectContaining({
        cluster_id: cluster.clusterId,
        entity_id: entity.id,
        previous_images: ['orders:1'],
        images: ['orders:2'],
      }),
    ]);
  });
});

describe('budgets and validation', () => {
  test('more workloads than SHIPYARD_AGENT_PUSH_MAX_WORKLOADS is a 413 naming the limit', async () => {
    const cluster = await newCluster('budget');
    const workloads = Array.from({ length: 5_001 }, (_, i) => ({ namespace: 'n', kind: 'Pod', name: `p${i}` }));
    const res = await call(cluster.agentToken, 'POST', '/k8s/agents/push', {
      cluster_id: cluster.clusterId,
      workloads,
    });
    expect(res.status).toBe(413);
    expect(res.body.error.message).toContain('SHIPYARD_AGENT_PUSH_MAX_WORKLOADS');
  });

  test('a push of 5,000 workloads (well over the general body and array limits) is accepted', async () => {
    const cluster = await newCluster('large');
    const workloads = Array.from({ length: 5_000 }, (_, i) => deployment(`w${i}`));
    const res = await push(cluster, workloads);
    expect(res).toMatchObject({ status: 200, body: { received: 5_000, created: 5_000 } });
  });

  test('bounded strings and maps: an overlong name, too many labels or a non-string label value is a 400', async () => {
    const cluster = await newCluster('bounds');
    const labels = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    for (const bad of [
      deployment('x'.repeat(254)),
      deployment('a', { labels }),
      deployment('a', { labels: { k: 1 as unknown as string } }),
      deployment('a', { images: ['i'.repeat(513)] }),
      { namespace: 'default', name: 'no-kind' } as Workload,
    ]) {
      expect((await push(cluster, [bad])).status).toBe(400);
    }
  });

  test('a workload named twice in one push is a 400 pointing at the repeat', async () => {
    const cluster = await newCluster('duplicate');
    const res = await push(cluster, [deployment('a'), deployment('b'), deployment('a')]);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'workloads/2' })]);
  });

  test('a push for another cluster than the token’s is a 403, and writes nothing', async () => {
    const cluster = await newCluster('foreign');
    const res = await call(cluster.agentToken, 'POST', '/k8s/agents/push', {
      cluster_id: 'someone-else',
      workloads: [deployment('a')],
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(await workloadRows(cluster)).toEqual([]);
  });
});

describe('the deprecated network-flow push', () => {
  const flow = (count: number, port = 8080) => ({
    source_namespace: 'default',
    source_name: 'web',
    destination_namespace: 'default',
    destination_name: 'api',
    port,
    protocol: 'TCP',
    count,
  });

  test('counts accumulate per pair, port and protocol, also within one push', async () => {
    const cluster = await newCluster('flows');
    const send = (flows: unknown[]) =>
      call(cluster.agentToken, 'POST', '/k8s/agents/network-flows', { cluster_id: cluster.clusterId, flows });
    expect(await send([flow(2), flow(3), flow(1, 9090)])).toEqual({ status: 200, body: { received: 3, flows: 2 } });
    await send([flow(10)]);
    const rows = await inTenant(cluster.admin.tenantId, (trx) =>
      trx('k8s_network_flows').orderBy('port').select('port', 'count'),
    );
    expect(rows).toEqual([
      { port: 8080, count: '15' },
      { port: 9090, count: '1' },
    ]);
  });

  test('it is refused for another cluster (403), bounded (400) and marked deprecated in OpenAPI', async () => {
    const cluster = await newCluster('flows-guard');
    const other = await call(cluster.agentToken, 'POST', '/k8s/agents/network-flows', {
      cluster_id: 'other',
      flows: [flow(1)],
    });
    expect(other.status).toBe(403);
    const badPort = await call(cluster.agentToken, 'POST', '/k8s/agents/network-flows', {
      cluster_id: cluster.clusterId,
      flows: [flow(1, 70_000)],
    });
    expect(badPort.status).toBe(400);
    const doc = await jsonOf(await fetch(`${suite.api.url}/api/v1/openapi.json`));
    expect(doc.paths['/api/v1/k8s/agents/network-flows'].post.deprecated).toBe(true);
    expect(doc.paths['/api/v1/k8s/agents/push'].post.deprecated).toBeUndefined();
  });
});

describe('tenant isolation', () => {
  test('a push writes only the agent’s tenant: another tenant with the same service id sees nothing of it', async () => {
    const a = await newCluster('iso-a');
    const b = await newCluster('iso-b');
    await push(a, [deployment('api', { labels: { 'shipyard.dev/service-id': 'shared-name' } })]);
    expect(await entityOf(b, 'shared-name')).toBeUndefined();
    expect(await workloadRows({ ...b, clusterId: a.clusterId })).toEqual([]);
    // B's agent cannot push into A's cluster either.
    const res = await call(b.agentToken, 'POST', '/k8s/agents/push', { cluster_id: a.clusterId, workloads: [] });
    expect(res.status).toBe(403);
    expect(await workloadRows(a)).toHaveLength(1);
  });
});
