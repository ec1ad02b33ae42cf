import { randomUUID } from 'node:crypto';
import { callApi, sessionToken, startApi, type TestApi } from './harness';

// What the roles suites share: an API, session tokens of two fresh tenants, and helpers for
// role bundles and permission probes.

/** The state of a roles suite; the tokens are set by its beforeAll. */
export interface RolesSuite {
  api: TestApi;
  /** Tenant name suffix, unique per suite run: tests derive names from it. */
  run: string;
  tenantA: string;
  tenantB: string;
  /** Tokens of an admin and a viewer of tenant A, and of an admin of tenant B. */
  adminA: string;
  viewerA: string;
  adminB: string;
  /** A user of tenant A with no role at all. */
  plain: { token: string; userId: string };
}

/**
 * Registers the hooks of a roles suite: the API on a socket (`startApi`) and session tokens of
 * tenant A's admin, viewer and role-less user and of tenant B's admin, in tenants unique to this
 * run. Read `suite` after beforeAll.
 */
export function useRolesSuite() {
  const run = randomUUID().slice(0, 8);
  const suite = { run, tenantA: `roles-a-${run}`, tenantB: `roles-b-${run}` } as RolesSuite;
  beforeAll(async () => {
    suite.api = await startApi();
    suite.adminA = (await sessionToken({ tenant: suite.tenantA, email: 'admin@a.test', roles: ['admin'] })).token;
    suite.viewerA = (await sessionToken({ tenant: suite.tenantA, email: 'viewer@a.test', roles: ['viewer'] })).token;
    suite.adminB = (await sessionToken({ tenant: suite.tenantB, email: 'admin@b.test', roles: ['admin'] })).token;
    suite.plain = await sessionToken({ tenant: suite.tenantA, email: 'plain@a.test' });
  });
  afterAll(() => suite.api?.close());

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callApi(suite.api, token, method, path, body);

  const newBundle = async (
    token: string,
    permissions: string[] = ['catalog:read'],
    name = `bundle-${randomUUID().slice(0, 6)}`,
  ) => {
    const res = await call(token, 'POST', '/admin/role-bundles', { name, description: 'test bundle', permissions });
    expect(res.status).toBe(201);
    return res.body as { id: string; name: string; permissions: string[] };
  };

  const permissionsOf = async (token: string): Promise<string[]> => (await call(token, 'GET', '/me')).body.permissions;

  /** A probe of an admin:write endpoint: creating a role bundle (201 allowed, 403 not). */
  const adminWriteStatus = async (token: string) =>
    (
      await call(token, 'POST', '/admin/role-bundles', {
        name: `probe-${randomUUID().slice(0, 8)}`,
        permissions: ['catalog:read'],
      })
    ).status;

  return { suite, call, newBundle, permissionsOf, adminWriteStatus };
}
