import { randomUUID } from 'node:crypto';
import { callApi, startApi, type TestApi } from '../support/harness';
import { adminTenant, auditEntries, type AdminTenant } from '../support/adminSuite';

// /admin/policies over HTTP: the catalogue with defaults, updates checked against each policy's
// schema, and the three enforced policies each refusing through the endpoint it governs (and
// only while enabled, and only in the tenant that enabled it).

let api: TestApi;
let a: AdminTenant;
let b: AdminTenant;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
const days = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
const enable = (t: AdminTenant, id: string, config?: Record<string, unknown>) =>
  call(t.admin, 'PUT', `/admin/policies/${id}`, { enabled: true, ...(config && { config }) });

beforeAll(async () => {
  api = await startApi();
  [a, b] = await Promise.all([adminTenant('policies-a'), adminTenant('policies-b')]);
});
afterAll(() => api?.close());

test('the catalogue lists the three policies with their defaults (disabled, default config) until changed', async () => {
  const { status, body } = await call(a.admin, 'GET', '/admin/policies');
  expect(status).toBe(200);
  expect(body.policies.map((p: { id: string }) => p.id)).toEqual([
    'api_key_max_lifetime',
    'entity_requires_owner',
    'production_molds_need_approval',
  ]);
  const lifetime = body.policies[0];
  expect(lifetime).toMatchObject({ enabled: false, config: { max_days: 90 }, updated_at: null });
  expect(lifetime.config_schema.properties.max_days).toMatchObject({ type: 'integer' });
});

test('a PUT sets enabled and config, audited with before and after; an unknown id is a 404', async () => {
  const t = await adminTenant('policies-put');
  const res = await enable(t, 'api_key_max_lifetime', { max_days: 30 });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ id: 'api_key_max_lifetime', enabled: true, config: { max_days: 30 } });
  expect(res.body.updated_at).toEqual(expect.any(String));
  const off = await call(t.admin, 'PUT', '/admin/policies/api_key_max_lifetime', { enabled: false });
  expect(off.body).toMatchObject({ enabled: false, config: { max_days: 30 } });
  const [first] = await auditEntries(api.deps.db, t.tenantId, 'policy.updated');
  expect(first).toMatchObject({
    target_id: 'api_key_max_lifetime',
    metadata: {
      before: { enabled: false, config: { max_days: 90 } },
      after: { enabled: true, config: { max_days: 30 } },
    },
  });
  expect((await call(t.admin, 'PUT', '/admin/policies/no_such_policy', { enabled: true })).status).toBe(404);
});

test("a config that does not match the policy's own schema is a 400 naming the field, and nothing changes", async () => {
  const t = await adminTenant('policies-schema');
  for (const config of [{ max_days: 0 }, { max_days: 'ten' }, { surprise: 1 }]) {
    const res = await call(t.admin, 'PUT', '/admin/policies/api_key_max_lifetime', { enabled: true, config });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('api_key_max_lifetime');
    expect(res.body.error.details[0].field).toMatch(/^body\.config|^config/);
  }
  const bogus = await call(t.admin, 'PUT', '/admin/policies/entity_requires_owner', { config: { anything: true } });
  expect(bogus.status).toBe(400);
  const { body } = await call(t.admin, 'GET', '/admin/policies');
  expect(body.policies.every((p: { enabled: boolean }) => !p.enabled)).toBe(true);
});

test('a viewer may not read policies and an editor may not change them', async () => {
  expect((await call(a.viewer, 'GET', '/admin/policies')).status).toBe(403);
  expect((await call(a.editor, 'PUT', '/admin/policies/entity_requires_owner', { enabled: true })).status).toBe(403);
});

describe('api_key_max_lifetime', () => {
  test('enabled: a key without expires_at, or expiring later than max_days, is a 400 naming the policy', async () => {
    const t = await adminTenant('policies-keys');
    const key = (expires_at?: string) =>
      call(t.admin, 'POST', '/admin/api-keys', {
        name: 'ci',
        scopes: ['catalog:read'],
        ...(expires_at && { expires_at }),
      });
    expect((await key()).status).toBe(201);
    await enable(t, 'api_key_max_lifetime', { max_days: 30 });
    for (const res of [await key(), await key(days(31))]) {
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('policy api_key_max_lifetime');
    }
    expect((await key(days(29))).status).toBe(201);
    const refusals = (await auditEntries(api.deps.db, t.tenantId, 'api_key.created')).filter(
      (e) => e.status === 'failure',
    );
    expect(refusals).toHaveLength(2);
  });

  test("one tenant's policy does not govern another's keys", async () => {
    await enable(a, 'api_key_max_lifetime', { max_days: 1 });
    const res = await call(b.admin, 'POST', '/admin/api-keys', { name: 'free', scopes: ['catalog:read'] });
    expect(res.status).toBe(201);
    await call(a.admin, 'PUT', '/admin/policies/api_key_max_lifetime', { enabled: false });
  });
});

describe('entity_requires_owner', () => {
  test('enabled: creating an entity without an owner, or updating it to none, is a 400 naming the policy', async () => {
    const t = await adminTenant('policies-owner');
    const before = await call(t.admin, 'POST', '/entities', {
      name: `legacy-${randomUUID().slice(0, 6)}`,
      type: 'service',
    });
    expect(before.status).toBe(201);
    await enable(t, 'entity_requires_owner');
    const noOwner = await call(t.admin, 'POST', '/entities', { name: 'orphan', type: 'service' });
    expect(noOwner.status).toBe(400);
    expect(noOwner.body.error.message).toContain('policy entity_requires_owner');
    const blank = await call(t.admin, 'POST', '/entities', { name: 'blank', type: 'service', owner: '  ' });
    expect(blank.status).toBe(400);
    const owned = await call(t.admin, 'POST', '/entities', { name: 'owned', type: 'service', owner: 'team-a' });
    expect(owned.status).toBe(201);
    const cleared = await call(t.admin, 'PUT', `/entities/${owned.body.id}`, { owner: null });
    expect(cleared.status).toBe(400);
    expect(cleared.body.error.message).toContain('policy entity_requires_owner');
    // An entity created before the policy must get an owner with its next update.
    const untouched = await call(t.admin, 'PUT', `/entities/${before.body.id}`, { description: 'x' });
    expect(untouched.status).toBe(400);
    const adopted = await call(t.admin, 'PUT', `/entities/${before.body.id}`, { owner: 'team-b' });
    expect(adopted.status).toBe(200);
  });

  test('disabled again, an entity without an owner is accepted', async () => {
    const t = await adminTenant('policies-owner-off');
    await enable(t, 'entity_requires_owner');
    await call(t.admin, 'PUT', '/admin/policies/entity_requires_owner', { enabled: false });
    expect((await call(t.admin, 'POST', '/entities', { name: 'orphan', type: 'service' })).status).toBe(201);
  });
});

describe('production_molds_need_approval', () => {
  const deployMold = (t: AdminTenant, extra: Record<string, unknown>) =>
    call(t.admin, 'POST', '/forge/molds', {
      slug: `deploy-${randomUUID().slice(0, 8)}`,
      name: 'Deploy',
      parameters: [{ name: 'service', type: 'string', required: true }],
      actions: [{ name: 'deploy', type: 'api-call', config: { url: 'https://deploy.invalid/hook' } }],
      ...extra,
    });

  test('enabled: a run naming a production entity, of a mold without approval, is refused naming the policy', async () => {
    const t = await adminTenant('policies-forge');
    const prod = await call(t.admin, 'POST', '/entities', {
      name: `payments-${randomUUID().slice(0, 6)}`,
      type: 'service',
      lifecycle: 'production',
      owner: 'team-a',
    });
    const dev = await call(t.admin, 'POST', '/entities', {
      name: 'sandbox-svc',
      type: 'service',
      lifecycle: 'development',
    });
    const plain = (await deployMold(t, {})).body;
    const gated = (await deployMold(t, { requires_approval: true })).body;
    const literal = (
      await deployMold(t, {
        parameters: [],
        actions: [
          {
            name: 'deploy',
            type: 'api-call',
            config: { url: 'https://deploy.invalid', body: { target: prod.body.service_id } },
          },
        ],
      })
    ).body;
    const run = (slug: string, parameters: Record<string, unknown>) =>
      call(t.admin, 'POST', '/forge/runs', { mold_slug: slug, parameters });

    expect((await run(plain.slug, { service: prod.body.service_id })).status).toBe(201);
    await enable(t, 'production_molds_need_approval');
    const refused = await run(plain.slug, { service: prod.body.service_id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('policy production_molds_need_approval');
    expect(refused.body.error.message).toContain(prod.body.service_id);
    const byAction = await run(literal.slug, {});
    expect(byAction.status).toBe(400);
    expect(byAction.body.error.message).toContain('policy production_molds_need_approval');
    // Not production, or gated by an approval: allowed.
    expect((await run(plain.slug, { service: dev.body.service_id })).status).toBe(201);
    expect((await run(gated.slug, { service: prod.body.service_id })).status).toBe(201);
  });

  test("another tenant's production entity with the same service_id does not count", async () => {
    const t = await adminTenant('policies-forge-iso');
    const other = await adminTenant('policies-forge-other');
    const name = `billing-${randomUUID().slice(0, 6)}`;
    await call(other.admin, 'POST', '/entities', { name, type: 'service', lifecycle: 'production', owner: 'x' });
    await enable(t, 'production_molds_need_approval');
    const mold = (await deployMold(t, {})).body;
    const res = await call(t.admin, 'POST', '/forge/runs', { mold_slug: mold.slug, parameters: { service: name } });
    expect(res.status).toBe(201);
  });
});

test("B's policy changes do not show in A's list", async () => {
  await call(b.admin, 'PUT', '/admin/policies/entity_requires_owner', { enabled: true });
  const { body } = await call(a.admin, 'GET', '/admin/policies');
  expect(body.policies.find((p: { id: string }) => p.id === 'entity_requires_owner').enabled).toBe(false);
  await call(b.admin, 'PUT', '/admin/policies/entity_requires_owner', { enabled: false });
});
