import { randomUUID } from 'node:crypto';
import { findTenantId } from '../../core/auth/store';
import { callApi, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// The platform tenant (SHIPYARD_PLATFORM_TENANT) on a deployment that has never seen it: a
// platform slug of its own stands in for a fresh database.

const run = randomUUID().slice(0, 8);
const platformTenant = `platform-${run}`;
let api: TestApi;

beforeAll(async () => {
  api = await startApi({ deps: await testDeps(testConfig({ platformTenant })) });
});
afterAll(() => api?.close());

test('the platform tenant exists once the API has started, before any token is minted for it', async () => {
  expect(await findTenantId(api.deps.system, platformTenant)).toBeDefined();
  const first = await sessionToken({
    tenant: platformTenant,
    createTenant: false,
    email: 'ops@platform.test',
    roles: ['admin'],
  });
  expect((await callApi(api, first.token, 'GET', '/admin/backfill/status')).status).toBe(200);
});

test("a tenant admin's refusal is not remembered against the platform: the next operator is one at once", async () => {
  const tenantAdmin = await sessionToken({ tenant: `tenant-${run}`, email: 'admin@tenant.test', roles: ['admin'] });
  expect((await callApi(api, tenantAdmin.token, 'GET', '/admin/backfill/status')).status).toBe(403);
  const operator = await sessionToken({ tenant: platformTenant, email: `ops-${run}@platform.test`, roles: ['admin'] });
  expect((await callApi(api, operator.token, 'GET', '/admin/backfill/status')).status).toBe(200);
});
