import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, testConfig, type TestApi } from '../support/harness';
import { adminTenant, auditEntries, type AdminTenant } from '../support/adminSuite';

// Feature flags over HTTP: only a platform operator manages flags and overrides (a tenant admin
// gets 403 on each route), every caller reads what applies to their own tenant, and a tenant's
// override wins over the flag's default for that tenant only. The app role cannot write flags.

let api: TestApi;
let operator: string;
let operatorTenantId: string;
let a: AdminTenant;
let b: AdminTenant;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
const newKey = () => `beta.${randomUUID().slice(0, 8)}`;
const features = async (token: string) => (await call(token, 'GET', '/features')).body.features;

beforeAll(async () => {
  api = await startApi();
  const ops = await sessionToken({
    tenant: testConfig().platformTenant,
    email: `ops-${randomUUID().slice(0, 8)}@platform.test`,
    roles: ['admin'],
  });
  [operator, operatorTenantId] = [ops.token, ops.tenantId];
  [a, b] = await Promise.all([adminTenant('features-a'), adminTenant('features-b')]);
});
afterAll(() => api?.close());

test('an operator creates, lists, changes and deletes a flag; each change is audited in their tenant', async () => {
  const key = newKey();
  const created = await call(operator, 'POST', '/admin/features', {
    key,
    name: 'New nav',
    description: 'The new navigation',
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ key, name: 'New nav', enabled: false, overrides: [] });
  expect((await call(operator, 'POST', '/admin/features', { key, name: 'again' })).status).toBe(409);
  const listed = (await call(operator, 'GET', '/admin/features')).body.features;
  expect(listed.find((f: { key: string }) => f.key === key)).toMatchObject({ name: 'New nav', enabled: false });
  const changed = await call(operator, 'PUT', `/admin/features/${key}`, { enabled: true, name: 'Nav' });
  expect(changed).toMatchObject({ status: 200, body: { key, name: 'Nav', enabled: true } });
  expect((await call(operator, 'DELETE', `/admin/features/${key}`)).status).toBe(204);
  expect((await call(operator, 'DELETE', `/admin/features/${key}`)).status).toBe(404);
  expect((await call(operator, 'PUT', `/admin/features/${key}`, { enabled: true })).status).toBe(404);
  const audited = await Promise.all(
    ['feature_flag.created', 'feature_flag.updated', 'feature_flag.deleted'].map((type) =>
      auditEntries(api.deps.db, operatorTenantId, type),
    ),
  );
  for (const entries of audited) expect(entries.some((e) => e.target_id === key)).toBe(true);
});

test("a tenant's override wins over the default for that tenant only, and removing it restores the default", async () => {
  const key = newKey();
  await call(operator, 'POST', '/admin/features', { key, name: 'Dark mode', enabled: false });
  expect((await features(a.viewer))[key]).toBe(false);

  const set = await call(operator, 'POST', `/admin/features/${key}/tenants/${a.tenantId}`, { enabled: true });
  expect(set).toMatchObject({ status: 200, body: { key, tenant_id: a.tenantId, enabled: true } });
  expect((await features(a.viewer))[key]).toBe(true);
  expect((await features(b.viewer))[key]).toBe(false);

  // The default turns on: B follows it, A's override (now off) still wins for A.
  await call(operator, 'POST', `/admin/features/${key}/tenants/${a.tenantId}`, { enabled: false });
  await call(operator, 'PUT', `/admin/features/${key}`, { enabled: true });
  expect((await features(a.viewer))[key]).toBe(false);
  expect((await features(b.viewer))[key]).toBe(true);

  const listed = (await call(operator, 'GET', '/admin/features')).body.features.find(
    (f: { key: string }) => f.key === key,
  );
  expect(listed.overrides).toEqual([{ tenant_id: a.tenantId, enabled: false, updated_at: expect.any(String) }]);

  expect((await call(operator, 'DELETE', `/admin/features/${key}/tenants/${a.tenantId}`)).status).toBe(204);
  expect((await features(a.viewer))[key]).toBe(true);
  expect((await call(operator, 'DELETE', `/admin/features/${key}/tenants/${a.tenantId}`)).status).toBe(404);
});

test('an override with no body turns the flag on; an unknown flag or tenant is a 404', async () => {
  const key = newKey();
  await call(operator, 'POST', '/admin/features', { key, name: 'Flag' });
  const res = await fetch(`${api.url}/api/v1/admin/features/${key}/tenants/${b.tenantId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}` },
  });
  expect(res.status).toBe(200);
  expect((await features(b.viewer))[key]).toBe(true);
  expect((await call(operator, 'POST', `/admin/features/no-such-flag/tenants/${b.tenantId}`, {})).status).toBe(404);
  expect((await call(operator, 'POST', `/admin/features/${key}/tenants/${randomUUID()}`, {})).status).toBe(404);
});

test('a tenant admin gets 403 on every flag-management route, each refusal audited, and nothing changes', async () => {
  const key = newKey();
  await call(operator, 'POST', '/admin/features', { key, name: 'Guarded' });
  const attempts: [string, string, unknown?][] = [
    ['GET', '/admin/features'],
    ['POST', '/admin/features', { key: newKey(), name: 'Sneaky' }],
    ['PUT', `/admin/features/${key}`, { enabled: true }],
    ['DELETE', `/admin/features/${key}`],
    ['POST', `/admin/features/${key}/tenants/${a.tenantId}`, { enabled: true }],
    ['DELETE', `/admin/features/${key}/tenants/${a.tenantId}`],
  ];
  for (const [method, path, body] of attempts) {
    const res = await call(a.admin, method, path, body);
    expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
  }
  expect((await features(a.admin))[key]).toBe(false);
  const refusals = await auditEntries(api.deps.db, a.tenantId, 'platform.operator_required');
  expect(refusals.length).toBeGreaterThanOrEqual(attempts.length);
});

test('the app role may read flags but not write them or any override, even in its own tenant', async () => {
  const key = newKey();
  await call(operator, 'POST', '/admin/features', { key, name: 'Locked' });
  await expect(
    withTenant(api.deps.db, a.tenantId, (trx) => trx('feature_flags').where({ key }).update({ enabled: true })),
  ).rejects.toThrow(/permission denied/);
  await expect(
    withTenant(api.deps.db, a.tenantId, (trx) =>
      trx('feature_flag_overrides').insert({ flag_key: key, tenant_id: a.tenantId, enabled: true }),
    ),
  ).rejects.toThrow(/permission denied/);
});

test("a tenant sees only its own override: B's override of a flag does not show to A", async () => {
  const key = newKey();
  await call(operator, 'POST', '/admin/features', { key, name: 'Per tenant' });
  await call(operator, 'POST', `/admin/features/${key}/tenants/${b.tenantId}`, { enabled: true });
  expect((await features(a.viewer))[key]).toBe(false);
  expect((await features(b.viewer))[key]).toBe(true);
});
