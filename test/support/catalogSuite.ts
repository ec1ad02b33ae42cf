import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from './harness';

// What the catalog suites share: an API on a socket, sessions in two fresh tenants, API keys of
// each catalog scope in tenant A, and helpers to create entities and age them.

type Session = { token: string; tenantId: string; userId: string };

export interface CatalogSuite {
  api: TestApi;
  /** Unique per suite run: tests derive names from it. */
  run: string;
  adminA: Session;
  adminB: Session;
}

export interface EntityBody {
  id: string;
  service_id: string;
  name: string;
  type: string;
  [field: string]: unknown;
}

/**
 * Registers the hooks of a catalog suite: the API (`startApi`) and admin sessions of two tenants
 * unique to this run. Read `suite` after beforeAll.
 */
export function useCatalogSuite() {
  const run = randomUUID().slice(0, 8);
  const suite = { run } as CatalogSuite;
  beforeAll(async () => {
    suite.api = await startApi();
    suite.adminA = await sessionToken({ tenant: `catalog-a-${run}`, email: 'admin@a.test', roles: ['admin'] });
    suite.adminB = await sessionToken({ tenant: `catalog-b-${run}`, email: 'admin@b.test', roles: ['admin'] });
  });
  afterAll(() => suite.api?.close());

  const call = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
    callApi(suite.api, token, method, path, body);

  /** A service id unique to this suite run. */
  const uniqueId = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

  /** Creates an entity in tenant A (or as `token`); fails the test on anything but a 201. */
  async function createEntity(body: Record<string, unknown>, token = suite.adminA.token): Promise<EntityBody> {
    const res = await call(token, 'POST', '/entities', { type: 'service', ...body });
    expect(res).toMatchObject({ status: 201 });
    return res.body;
  }

  /** An API key of tenant A's admin with exactly `scopes`. */
  async function apiKey(scopes: string[]): Promise<string> {
    const res = await call(suite.adminA.token, 'POST', '/admin/api-keys', { name: uniqueId('key'), scopes });
    expect(res.status).toBe(201);
    return res.body.token;
  }

  /** Moves an entity's last activity and creation `days` into the past, behind the API. */
  async function age(tenantId: string, entityId: string, days: { inactive: number; old: number }): Promise<void> {
    await withTenant(suite.api.deps.db, tenantId, (trx) =>
      trx('entities')
        .where({ id: entityId })
        .update({
          last_activity_at: trx.raw(`now() - make_interval(days => ?)`, [days.inactive]),
          created_at: trx.raw(`now() - make_interval(days => ?)`, [days.old]),
        }),
    );
  }

  return { suite, call, uniqueId, createEntity, apiKey, age };
}
