import { useAgentsSuite } from '../support/agentsSuite';
import { devKey, endedBetaKey } from '../support/licenseSuite';

// Registration and licensing together, through the API alone: a parked cluster gets in on its
// next attempt once the tenant's allowance grows (an approval, a license covering more
// clusters), and agent traffic keeps working through the Beta read-only window.

const { call, freshTenant, register, newCluster, inTenant } = useAgentsSuite();

const workload = { name: 'checkout', namespace: 'shop', kind: 'Deployment', replicas: 1, ready_replicas: 1 };

test("approving a parked registration lets the agent's next attempt register it", async () => {
  const { admin } = await newCluster('approve');
  expect((await register(admin, 'parked')).status).toBe(202);

  const approved = await call(admin.token, 'POST', '/license/pending-clusters/parked/approve');
  expect(approved.status).toBe(200);
  expect((await call(admin.token, 'GET', '/license/pending-clusters')).body).toEqual([]);

  expect((await register(admin, 'parked')).status).toBe(201);
  expect((await call(admin.token, 'GET', '/license')).body.resource_usage).toContainEqual(
    expect.objectContaining({ resource: 'clusters', used: 2, limit: 2 }),
  );
  // The grant was one cluster: a third parks again.
  expect((await register(admin, 'third')).status).toBe(202);
});

test('a dismissed registration parks again on its next attempt', async () => {
  const { admin } = await newCluster('dismiss');
  expect((await register(admin, 'parked')).status).toBe(202);
  expect((await call(admin.token, 'DELETE', '/license/pending-clusters/parked')).status).toBe(204);
  const again = await register(admin, 'parked');
  expect(again).toMatchObject({ status: 202, body: { attempts: 1 } });
});

test('activating a license that covers more clusters lets the next attempt succeed', async () => {
  const { admin } = await newCluster('upgrade');
  expect((await register(admin, 'second')).status).toBe(202);
  const activated = await call(admin.token, 'POST', '/license/activate', { license_key: devKey({ clusters: 5 }) });
  expect(activated.status).toBe(200);
  expect((await register(admin, 'second')).status).toBe(201);
});

test('a stored license whose key no longer verifies counts as unreadable: registrations get the free limit', async () => {
  const { admin } = await newCluster('unreadable');
  expect((await call(admin.token, 'POST', '/license/activate', { license_key: devKey({ clusters: 5 }) })).status).toBe(
    200,
  );
  await inTenant(admin.tenantId, (trx) => trx('licenses').update({ license_key: trx.raw("license_key || 'x'") }));
  expect((await register(admin, 'second')).status).toBe(202);
  expect((await call(admin.token, 'GET', '/license')).body).toMatchObject({ is_valid: false, edition: 'free' });
});

test('in the Beta read-only window a user write is refused with 423, while heartbeats and pushes of agents keep working', async () => {
  const { admin, clusterId, agentToken } = await newCluster('beta');
  expect((await call(admin.token, 'POST', '/license/activate', { license_key: endedBetaKey() })).status).toBe(200);
  expect((await call(admin.token, 'GET', '/license')).body.is_read_only).toBe(true);

  const refused = await register(admin, 'another');
  expect(refused).toMatchObject({ status: 423, body: { error: { code: 'BETA_ENDED_READ_ONLY' } } });
  expect((await call(admin.token, 'POST', `/k8s/agents/${clusterId}/rotate`)).status).toBe(423);

  const heartbeat = await call(agentToken, 'POST', '/k8s/agents/heartbeat', { agent_version: '1.0.0', node_count: 2 });
  expect(heartbeat.status).toBe(200);
  const push = await call(agentToken, 'POST', '/k8s/agents/push', { cluster_id: clusterId, workloads: [workload] });
  expect(push).toMatchObject({ status: 200, body: { received: 1 } });
  expect((await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).body).toMatchObject({
    node_count: 2,
    workload_count: 1,
  });
});

test("one tenant's license and approvals do not change another tenant's cluster limit", async () => {
  const { admin } = await newCluster('iso-a');
  const other = await freshTenant('iso-b');
  expect((await call(admin.token, 'POST', '/license/activate', { license_key: devKey({ clusters: 5 }) })).status).toBe(
    200,
  );
  expect((await register(other, 'first')).status).toBe(201);
  expect((await register(other, 'second')).status).toBe(202);
  expect((await call(admin.token, 'POST', '/license/pending-clusters/second/approve')).status).toBe(404);
});
