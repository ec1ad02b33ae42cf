import { randomUUID } from 'node:crypto';
import type { UserPrincipal } from '../../core/auth/principal';
import { registerAgent } from '../../core/k8s/agentCommands';
import { withTenant } from '../../db/tenancy';
import { useAgentsSuite } from '../support/agentsSuite';
import { sessionToken } from '../support/harness';

// The agent registry over real HTTP: registration within and past the cluster limit, tokens
// (rotate, revoke), delete, heartbeat and status, who may call which route, tenant isolation.

const { suite, call, freshTenant, uniqueCluster, register, newCluster, inTenant } = useAgentsSuite();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const heartbeat = (token: string) =>
  call(token, 'POST', '/k8s/agents/heartbeat', { agent_version: '1.2.3', node_count: 3 });

describe('registration and the cluster limit', () => {
  test('a free tenant registers one cluster (201 with a token); the second parks (202) and counts its attempts', async () => {
    const admin = await freshTenant('limit');
    const first = await register(admin, 'prod-eu', { environment: 'production', region: 'eu-west-1' });
    expect(first).toMatchObject({
      status: 201,
      body: { cluster_id: 'prod-eu', token: expect.stringMatching(/^shp_agt_/) },
    });

    const second = await register(admin, 'staging');
    expect(second).toEqual({ status: 202, body: { cluster_id: 'staging', status: 'pending', attempts: 1 } });
    const again = await register(admin, 'staging');
    expect(again).toEqual({ status: 202, body: { cluster_id: 'staging', status: 'pending', attempts: 2 } });

    const pending = await inTenant(admin.tenantId, (trx) => trx('pending_cluster_registrations').select());
    expect(pending).toEqual([expect.objectContaining({ cluster_id: 'staging', attempts: 2, name: 'staging' })]);
    expect(pending[0].last_attempted_at.getTime()).toBeGreaterThanOrEqual(pending[0].first_attempted_at.getTime());
    // A parked cluster is not an agent.
    expect((await call(admin.token, 'GET', '/k8s/agents/staging')).status).toBe(404);
    const audit = await inTenant(admin.tenantId, (trx) =>
      trx('audit_log').whereIn('event_type', ['agent.registered', 'agent.parked']).orderBy('id').pluck('event_type'),
    );
    expect(audit).toEqual(['agent.registered', 'agent.parked', 'agent.parked']);
  });

  test('re-registering an active cluster is not counted against the limit: a new token, the old one revoked', async () => {
    const { admin, clusterId, agentToken } = await newCluster('reregister');
    const again = await register(admin, clusterId, { display_name: 'Renamed' });
    expect(again.status).toBe(201);
    expect((await heartbeat(agentToken)).status).toBe(401);
    expect((await heartbeat(again.body.token)).status).toBe(200);
    expect((await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).body.display_name).toBe('Renamed');
  });

  test('a successful registration clears its parked row: once a slot is free, the parked cluster gets in', async () => {
    const { admin, clusterId } = await newCluster('unpark');
    expect((await register(admin, 'waiting')).status).toBe(202);
    expect((await call(admin.token, 'DELETE', `/k8s/agents/${clusterId}`)).status).toBe(204);
    expect((await register(admin, 'waiting')).status).toBe(201);
    expect(await inTenant(admin.tenantId, (trx) => trx('pending_cluster_registrations').select())).toEqual([]);
  });

  test('five concurrent registrations over HTTP: one 201, four parked, no error', async () => {
    const admin = await freshTenant('race');
    const replies = await Promise.all([1, 2, 3, 4, 5].map(() => register(admin)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 202, 202, 202, 202]);
    expect((await call(admin.token, 'GET', '/k8s/agents')).body.agents).toHaveLength(1);
  });

  test('a registration waits for a concurrent one to commit before counting, so both cannot take the last slot', async () => {
    const admin = await freshTenant('lock');
    const principal: UserPrincipal = {
      kind: 'user',
      tenantId: admin.tenantId,
      userId: admin.userId,
      email: 'admin@agents.test',
      name: 'admin',
      groups: [],
      roles: ['admin'],
      permissions: new Set(),
      operator: false,
      expiresAt: new Date(Date.now() + 60_000),
    };
    const db = suite.api.deps.db;
    let holdFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (holdFirst = resolve));
    let firstRegistered!: () => void;
    const registeredOnce = new Promise<void>((resolve) => (firstRegistered = resolve));
    const first = withTenant(db, admin.tenantId, async (trx) => {
      const outcome = await registerAgent(
        trx,
        principal,
        { cluster_id: 'first', display_name: 'first' },
        suite.api.deps.licensePublicKey,
      );
      firstRegistered();
      await firstMayCommit; // still uncommitted while the second one counts
      return outcome;
    });
    await registeredOnce;
    const second = withTenant(db, admin.tenantId, (trx) =>
      registerAgent(trx, principal, { cluster_id: 'second', display_name: 'second' }, suite.api.deps.licensePublicKey),
    );
    const early = await Promise.race([second.then(() => 'finished'), sleep(300).then(() => 'waiting')]);
    holdFirst();
    expect(early).toBe('waiting');
    expect(await first).toMatchObject({ registered: true });
    expect(await second).toEqual({ registered: false, cluster_id: 'second', status: 'pending', attempts: 1 });
  });

  test('the body is bounded and validated: a missing display_name or an overlong cluster_id is a 400', async () => {
    const admin = await freshTenant('invalid');
    expect((await call(admin.token, 'POST', '/k8s/agents/register', { cluster_id: 'x' })).status).toBe(400);
    const long = await call(admin.token, 'POST', '/k8s/agents/register', {
      cluster_id: 'x'.repeat(254),
      display_name: 'x',
    });
    expect(long.status).toBe(400);
    const slash = await call(admin.token, 'POST', '/k8s/agents/register', { cluster_id: 'a/b', display_name: 'x' });
    expect(slash.status).toBe(400);
  });

  test('registering needs k8s-agents:create: a viewer gets 403', async () => {
    const admin = await freshTenant('viewer');
    const viewer = await sessionToken({
      tenant: admin.tenantId,
      email: 'viewer@agents.test',
      roles: ['viewer'],
    });
    expect((await register(viewer)).status).toBe(403);
    expect((await call(viewer.token, 'GET', '/k8s/agents')).status).toBe(200);
  });
});

describe('tokens', () => {
  test('rotate: the new token works and the old one fails on its next request (401)', async () => {
    const { admin, clusterId, agentToken } = await newCluster('rotate');
    expect((await heartbeat(agentToken)).status).toBe(200);
    const rotated = await call(admin.token, 'POST', `/k8s/agents/${clusterId}/rotate`);
    expect(rotated).toMatchObject({
      status: 200,
      body: { cluster_id: clusterId, token: expect.stringMatching(/^shp_agt_/) },
    });
    expect((await heartbeat(agentToken)).status).toBe(401);
    expect((await heartbeat(rotated.body.token)).status).toBe(200);
  });

  test('revoke: the agent can no longer authenticate; the agent and its data stay; audited', async () => {
    const { admin, clusterId, agentToken } = await newCluster('revoke');
    const push = await call(agentToken, 'POST', '/k8s/agents/push', {
      cluster_id: clusterId,
      workloads: [{ namespace: 'default', kind: 'Deployment', name: 'web' }],
    });
    expect(push.status).toBe(200);
    expect(await call(admin.token, 'POST', `/k8s/agents/${clusterId}/revoke`)).toEqual({
      status: 200,
      body: { cluster_id: clusterId, revoked: true },
    });
    expect((await heartbeat(agentToken)).status).toBe(401);
    expect((await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).body).toMatchObject({ workload_count: 1 });
    const events = await inTenant(admin.tenantId, (trx) =>
      trx('audit_log').where({ target_id: clusterId }).orderBy('id').pluck('event_type'),
    );
    expect(events).toEqual(['agent.registered', 'agent.token_revoked']);
  });

  test('a revoked cluster frees its slot, and registering it again counts against the limit like any other', async () => {
    const { admin, clusterId } = await newCluster('revoked-slot');
    await call(admin.token, 'POST', `/k8s/agents/${clusterId}/revoke`);
    expect((await register(admin, 'replacement')).status).toBe(201);
    // Registering cannot undo a disconnect while the slot is taken.
    expect((await register(admin, clusterId)).status).toBe(202);
  });

  test('rotate, revoke, get and delete of an unknown cluster are 404', async () => {
    const admin = await freshTenant('unknown');
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/rotate'],
      ['POST', '/revoke'],
    ]) {
      expect((await call(admin.token, method, `/k8s/agents/nowhere${suffix}`)).status).toBe(404);
    }
  });
});

describe('delete', () => {
  test('removes the agent, its tokens and, by cascade, everything it pushed', async () => {
    const { admin, clusterId, agentToken } = await newCluster('delete');
    await call(agentToken, 'POST', '/k8s/agents/push', {
      cluster_id: clusterId,
      workloads: [{ namespace: 'default', kind: 'Deployment', name: 'web', images: ['web:1'] }],
    });
    await call(agentToken, 'POST', '/k8s/agents/push', {
      cluster_id: clusterId,
      workloads: [{ namespace: 'default', kind: 'Deployment', name: 'web', images: ['web:2'] }],
    });
    await call(agentToken, 'POST', '/k8s/agents/network-flows', {
      cluster_id: clusterId,
      flows: [
        {
          source_namespace: 'default',
          source_name: 'web',
          destination_namespace: 'default',
          destination_name: 'db',
          port: 5432,
          protocol: 'TCP',
          count: 3,
        },
      ],
    });
    const counts = () =>
      inTenant(admin.tenantId, async (trx) =>
        Promise.all(
          ['k8s_agents', 'k8s_workloads', 'k8s_deployments', 'k8s_network_flows', 'agent_tokens'].map(async (table) =>
            Number((await trx(table).where({ cluster_id: clusterId }).count<{ count: string }[]>('*'))[0].count),
          ),
        ),
      );
    expect(await counts()).toEqual([1, 1, 1, 1, 1]);
    expect((await call(admin.token, 'DELETE', `/k8s/agents/${clusterId}`)).status).toBe(204);
    expect(await counts()).toEqual([0, 0, 0, 0, 0]);
    expect((await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).status).toBe(404);
    expect((await heartbeat(agentToken)).status).toBe(401);
  });
});

describe('heartbeat and status', () => {
  test('a new agent is offline; a heartbeat makes it active and records version and node count', async () => {
    const { admin, clusterId, agentToken } = await newCluster('heartbeat');
    const before = (await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).body;
    expect(before).toMatchObject({ status: 'offline', last_heartbeat: null, agent_version: null, node_count: 0 });

    const beat = await heartbeat(agentToken);
    expect(beat).toMatchObject({ status: 200, body: { cluster_id: clusterId, status: 'active' } });
    const after = (await call(admin.token, 'GET', '/k8s/agents')).body.agents;
    expect(after).toEqual([
      {
        cluster_id: clusterId,
        display_name: clusterId,
        environment: null,
        region: null,
        status: 'active',
        last_heartbeat: beat.body.last_heartbeat,
        agent_version: '1.2.3',
        node_count: 3,
        workload_count: 0,
        created_at: expect.any(String),
      },
    ]);
  });

  test('the status follows the last heartbeat’s age: stale past 90 s, offline past 10 minutes', async () => {
    const { admin, clusterId, agentToken } = await newCluster('ageing');
    await heartbeat(agentToken);
    const age = (seconds: number) =>
      inTenant(admin.tenantId, (trx) =>
        trx('k8s_agents').update({ last_heartbeat: trx.raw(`now() - interval '${seconds} seconds'`) }),
      );
    const status = async () => (await call(admin.token, 'GET', `/k8s/agents/${clusterId}`)).body.status;
    await age(120);
    expect(await status()).toBe('stale');
    await age(11 * 60);
    expect(await status()).toBe('offline');
  });

  test('the heartbeat body is validated: a negative node count is a 400', async () => {
    const { agentToken } = await newCluster('heartbeat-400');
    const res = await call(agentToken, 'POST', '/k8s/agents/heartbeat', { agent_version: '1', node_count: -1 });
    expect(res.status).toBe(400);
  });
});

describe('who may call', () => {
  test('an agent token is refused on every non-agent route (401), including the registry', async () => {
    const { clusterId, agentToken } = await newCluster('agent-elsewhere');
    expect((await call(agentToken, 'GET', '/k8s/agents')).status).toBe(401);
    expect((await call(agentToken, 'GET', `/k8s/agents/${clusterId}`)).status).toBe(401);
    expect((await call(agentToken, 'POST', `/k8s/agents/${clusterId}/rotate`)).status).toBe(401);
    expect((await call(agentToken, 'GET', '/entities')).status).toBe(401);
  });

  test('a session token and an API key are refused on the agent routes (401)', async () => {
    const { admin, clusterId } = await newCluster('humans');
    const key = await call(admin.token, 'POST', '/admin/api-keys', {
      name: `k-${randomUUID().slice(0, 6)}`,
      scopes: ['k8s-agents:admin'],
    });
    expect(key.status).toBe(201);
    for (const token of [admin.token, key.body.token as string]) {
      expect((await heartbeat(token)).status).toBe(401);
      const push = await call(token, 'POST', '/k8s/agents/push', { cluster_id: clusterId, workloads: [] });
      expect(push.status).toBe(401);
      const flows = await call(token, 'POST', '/k8s/agents/network-flows', { cluster_id: clusterId, flows: [] });
      expect(flows.status).toBe(401);
    }
  });
});

describe('tenant isolation', () => {
  test('another tenant sees no agent, and gets 404 on every route naming one', async () => {
    const { clusterId } = await newCluster('owner');
    const other = await freshTenant('other');
    expect((await call(other.token, 'GET', '/k8s/agents')).body).toEqual({ agents: [] });
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/rotate'],
      ['POST', '/revoke'],
      ['DELETE', ''],
    ]) {
      expect((await call(other.token, method, `/k8s/agents/${clusterId}${suffix}`)).status).toBe(404);
    }
  });

  test('the same cluster id registers independently in two tenants; each token reaches its own agent only', async () => {
    const clusterId = uniqueCluster('shared');
    const a = await freshTenant('twin-a');
    const b = await freshTenant('twin-b');
    const tokenA = (await register(a, clusterId)).body.token;
    expect((await register(b, clusterId)).status).toBe(201);
    await call(tokenA, 'POST', '/k8s/agents/heartbeat', { agent_version: 'a', node_count: 1 });
    expect((await call(a.token, 'GET', `/k8s/agents/${clusterId}`)).body.agent_version).toBe('a');
    expect((await call(b.token, 'GET', `/k8s/agents/${clusterId}`)).body.agent_version).toBeNull();
  });
});
