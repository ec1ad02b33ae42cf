import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from './harness';

// What the cluster-agent suites share: an API on a socket, and fresh tenants (each a free
// edition: one cluster) with an admin session and, on demand, a registered cluster.

export type Session = { token: string; tenantId: string; userId: string };

export interface Cluster {
  admin: Session;
  clusterId: string;
  agentToken: string;
}

export function useAgentsSuite() {
  const run = randomUUID().slice(0, 8);
  const suite = { run } as { run: string; api: TestApi };
  beforeAll(async () => {
    suite.api = await startApi();
  });
  afterAll(() => suite.api?.close());

  const call = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
    callApi(suite.api, token, method, path, body);

  /** An admin of a tenant of its own, so its cluster limit is untouched by other tests. */
  const freshTenant = (label: string): Promise<Session> =>
    sessionToken({
      tenant: `agents-${label}-${run}-${randomUUID().slice(0, 6)}`,
      email: 'admin@agents.test',
      roles: ['admin'],
    });

  const uniqueCluster = (prefix = 'cluster') => `${prefix}-${randomUUID().slice(0, 8)}`;

  async function register(admin: Session, clusterId = uniqueCluster(), extra: Record<string, unknown> = {}) {
    return call(admin.token, 'POST', '/k8s/agents/register', {
      cluster_id: clusterId,
      display_name: clusterId,
      ...extra,
    });
  }

  /** A fresh tenant with one registered cluster (fails the test on anything but a 201). */
  async function newCluster(label: string): Promise<Cluster> {
    const admin = await freshTenant(label);
    const clusterId = uniqueCluster();
    const res = await register(admin, clusterId);
    expect(res).toMatchObject({ status: 201, body: { cluster_id: clusterId } });
    return { admin, clusterId, agentToken: res.body.token };
  }

  /** Reads or writes a tenant's rows behind the API, under its RLS. */
  const inTenant = <T>(tenantId: string, work: (trx: Knex.Transaction) => Promise<T>) =>
    withTenant(suite.api.deps.db, tenantId, work);

  return { suite, call, freshTenant, uniqueCluster, register, newCluster, inTenant };
}
