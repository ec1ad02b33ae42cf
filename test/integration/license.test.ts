import { generateKeyPairSync } from 'node:crypto';
import { signLicenseKey } from '../../core/license/keys';
import { withTenant } from '../../db/tenancy';
import { callApi, startApi, type TestApi } from '../support/harness';
import {
  auditTypes,
  devKey,
  insertAgents,
  insertPending,
  licenseTenant,
  type LicenseTenant,
} from '../support/licenseSuite';

// The /license routes over real HTTP: status and its warnings from live usage, activation and
// deactivation (audited, refusals changing nothing), parked registrations, access and tenant
// isolation. Keys are signed with the dev key the test API verifies with.

let api: TestApi;
let a: LicenseTenant;
let b: LicenseTenant;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
const days = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();

beforeAll(async () => {
  api = await startApi();
  [a, b] = await Promise.all([licenseTenant('license-a'), licenseTenant('license-b')]);
});
afterAll(() => api?.close());

/** A fresh tenant for a test that changes its license. */
const freshTenant = () => licenseTenant('license');

test('a tenant without a license reads the free edition: 1 cluster, 5 nodes, valid, every field present', async () => {
  const { status, body } = await call(a.viewer, 'GET', '/license');
  expect(status).toBe(200);
  expect(body).toEqual({
    edition: 'free',
    type: null,
    clusters: 0,
    licensee: null,
    issued_at: null,
    expires_at: null,
    activated_at: null,
    key_prefix: null,
    resource_limits: { clusters: 1, nodes: 5 },
    resource_usage: [
      { resource: 'clusters', used: 0, limit: 1, percent: 0 },
      { resource: 'nodes', used: 0, limit: 5, percent: 0 },
    ],
    warnings: [],
    is_expired: false,
    is_valid: true,
    has_license: false,
    beta_ends_at: null,
    beta_grace_ends_at: null,
    is_read_only: false,
  });
});

test('activating a standard key sets edition, limits and expiry, audited and shown in /admin/activity', async () => {
  const t = await freshTenant();
  const expires = days(400);
  const key = devKey({ edition: 'standard', clusters: 5, licensee: 'Acme', expires_at: expires });
  const activated = await call(t.admin, 'POST', '/license/activate', { license_key: key });
  expect(activated.status).toBe(200);
  expect(activated.body).toMatchObject({
    edition: 'standard',
    type: 'selfhosted',
    clusters: 5,
    licensee: 'Acme',
    expires_at: expires,
    key_prefix: 'SHP-ST',
    resource_limits: { clusters: 5, nodes: 0 },
    has_license: true,
    is_valid: true,
    is_expired: false,
    beta_ends_at: null,
    is_read_only: false,
  });
  expect(activated.body.activated_at).toEqual(expect.any(String));
  expect((await call(t.viewer, 'GET', '/license')).body).toEqual(activated.body);
  const activity = await call(t.admin, 'GET', '/admin/activity?limit=10');
  expect(activity.body.items[0]).toMatchObject({ eventType: expect.stringMatching(/^license\.activated$/) });
});

test('a forged, tampered, malformed or mislabelled key is a 400 that changes nothing, and the refusal is audited', async () => {
  const t = await freshTenant();
  const good = devKey({ edition: 'standard', clusters: 2 });
  expect((await call(t.admin, 'POST', '/license/activate', { license_key: good })).status).toBe(200);
  const before = (await call(t.admin, 'GET', '/license')).body;
  const forged = signLicenseKey(
    {
      edition: 'airgapped',
      type: 'selfhosted',
      clusters: 0,
      nodes: 0,
      licensee: 'Mallory',
      issued_at: new Date().toISOString(),
      expires_at: null,
    },
    generateKeyPairSync('ed25519').privateKey,
  );
  const [, signature] = good.split('.');
  const tampered = `SHP-ST-${Buffer.from(JSON.stringify({ edition: 'standard', licensee: 'Acme', clusters: 99, issued_at: '2026-11-01' })).toString('base64url')}.${signature}`;
  const mislabelled = good.replace(/^SHP-ST-/, 'SHP-AG-');
  for (const [license_key, message] of [
    [forged, /signature does not verify/],
    [tampered, /signature does not verify/],
    ['SHP-ST-garbage', /malformed/],
    [mislabelled, /prefix SHP-AG does not match its signed edition \(standard\)/],
  ] as const) {
    const refused = await call(t.admin, 'POST', '/license/activate', { license_key });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(message) });
  }
  expect((await call(t.admin, 'GET', '/license')).body).toEqual(before);
  const audit = await withTenant(api.deps.db, t.tenantId, (trx) =>
    trx('audit_log').select('event_type', 'status').where({ event_type: 'license.activated' }).orderBy('id'),
  );
  expect(audit.map((row: { status: string }) => row.status)).toEqual([
    'success',
    'failure',
    'failure',
    'failure',
    'failure',
  ]);
});

test('deactivation returns the tenant to free limits, audited', async () => {
  const t = await freshTenant();
  await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ edition: 'airgapped', clusters: 40 }) });
  expect((await call(t.admin, 'GET', '/license')).body.resource_limits).toEqual({ clusters: 40, nodes: 0 });
  const deactivated = await call(t.admin, 'POST', '/license/deactivate');
  expect(deactivated.status).toBe(200);
  expect(deactivated.body).toMatchObject({
    edition: 'free',
    has_license: false,
    resource_limits: { clusters: 1, nodes: 5 },
  });
  expect(await auditTypes(api.deps.db, t.tenantId)).toEqual(['license.activated', 'license.deactivated']);
});

test('a stored key that no longer verifies (altered in the database) reads as free limits and invalid', async () => {
  const t = await freshTenant();
  await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ edition: 'standard', clusters: 9 }) });
  await withTenant(api.deps.db, t.tenantId, (trx) =>
    trx('licenses').update({ license_key: trx.raw("license_key || 'x'") }),
  );
  expect((await call(t.viewer, 'GET', '/license')).body).toMatchObject({
    edition: 'free',
    has_license: true,
    is_valid: false,
    key_prefix: 'SHP-ST',
    resource_limits: { clusters: 1, nodes: 5 },
  });
  expect((await call(t.viewer, 'GET', '/license/usage')).body.resource_limits).toEqual({ clusters: 1, nodes: 5 });
});

describe('warnings and usage from the live database', () => {
  test('usage counts agents holding an unrevoked token and their nodes; resource_high at 80%', async () => {
    const t = await freshTenant();
    await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ edition: 'standard', clusters: 5 }) });
    await insertAgents(api.deps.db, t.tenantId, [
      { clusterId: 'c1', nodes: 3, ageSeconds: 30 },
      { clusterId: 'c2', nodes: 4, ageSeconds: 20 },
      { clusterId: 'c3', nodes: 5, ageSeconds: 10 },
      { clusterId: 'c4', nodes: 6, ageSeconds: 5 },
      { clusterId: 'gone', nodes: 50, ageSeconds: 5, revoked: true },
    ]);
    const usage = await call(t.viewer, 'GET', '/license/usage');
    expect(usage.body).toEqual({
      resource_limits: { clusters: 5, nodes: 0 },
      resource_usage: [
        { resource: 'clusters', used: 4, limit: 5, percent: 80 },
        { resource: 'nodes', used: 18, limit: 0, percent: 0 },
      ],
    });
    expect((await call(t.viewer, 'GET', '/license')).body.warnings).toEqual([
      { type: 'resource_high', level: 'warning', message: '4 of 5 clusters in use (80%)' },
    ]);
  });

  test('resource_exceeded past the limit (free nodes over 5)', async () => {
    const t = await freshTenant();
    await insertAgents(api.deps.db, t.tenantId, [{ clusterId: 'big', nodes: 7, ageSeconds: 1 }]);
    const { warnings } = (await call(t.viewer, 'GET', '/license')).body;
    expect(warnings).toEqual(
      expect.arrayContaining([
        { type: 'resource_exceeded', level: 'error', message: '7 nodes in use, over the limit of 5' },
      ]),
    );
  });

  test('expiring_soon within 30 days; expired after, invalid but keeping its edition', async () => {
    const t = await freshTenant();
    await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ expires_at: days(10) }) });
    expect((await call(t.viewer, 'GET', '/license')).body.warnings).toEqual([
      expect.objectContaining({ type: 'expiring_soon', level: 'warning' }),
    ]);
    await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ clusters: 4, expires_at: days(-1) }) });
    expect((await call(t.viewer, 'GET', '/license')).body).toMatchObject({
      edition: 'standard',
      is_expired: true,
      is_valid: false,
      resource_limits: { clusters: 4, nodes: 0 },
      warnings: [expect.objectContaining({ type: 'expired', level: 'error' })],
    });
  });
});

describe('pending cluster registrations', () => {
  test('listed oldest first with their attempts (an empty array when none)', async () => {
    const t = await freshTenant();
    expect((await call(t.admin, 'GET', '/license/pending-clusters')).body).toEqual([]);
    await insertPending(api.deps.db, t.tenantId, 'parked-1', 3);
    await insertPending(api.deps.db, t.tenantId, 'parked-2');
    const { status, body } = await call(t.admin, 'GET', '/license/pending-clusters');
    expect(status).toBe(200);
    expect(body).toEqual([
      expect.objectContaining({ cluster_id: 'parked-1', name: 'Cluster parked-1', attempts: 3 }),
      expect.objectContaining({ cluster_id: 'parked-2', attempts: 1 }),
    ]);
    expect(body[0].first_attempted_at).toEqual(expect.any(String));
    expect(body[0].last_attempted_at).toEqual(expect.any(String));
  });

  test('dismiss: 204, removed, no capacity granted, audited; 404 when none', async () => {
    const t = await freshTenant();
    await insertPending(api.deps.db, t.tenantId, 'to-dismiss');
    expect((await call(t.admin, 'DELETE', '/license/pending-clusters/to-dismiss')).status).toBe(204);
    expect((await call(t.admin, 'GET', '/license/pending-clusters')).body).toEqual([]);
    expect((await call(t.admin, 'DELETE', '/license/pending-clusters/to-dismiss')).status).toBe(404);
    expect((await call(t.viewer, 'GET', '/license')).body.resource_limits).toEqual({ clusters: 1, nodes: 5 });
    expect(await auditTypes(api.deps.db, t.tenantId)).toEqual(['license.cluster_dismissed']);
  });

  test('approve: the cluster limit rises by 1 each time, the row goes, audited; 404 when none', async () => {
    const t = await freshTenant();
    await insertPending(api.deps.db, t.tenantId, 'p1');
    await insertPending(api.deps.db, t.tenantId, 'p2');
    const first = await call(t.admin, 'POST', '/license/pending-clusters/p1/approve');
    expect(first).toEqual({ status: 200, body: { cluster_id: 'p1', approved_clusters: 1 } });
    expect((await call(t.admin, 'POST', '/license/pending-clusters/p2/approve')).body.approved_clusters).toBe(2);
    expect((await call(t.viewer, 'GET', '/license')).body.resource_limits).toEqual({ clusters: 3, nodes: 5 });
    expect((await call(t.admin, 'GET', '/license/pending-clusters')).body).toEqual([]);
    expect((await call(t.admin, 'POST', '/license/pending-clusters/p1/approve')).status).toBe(404);
    expect(await auditTypes(api.deps.db, t.tenantId)).toEqual(['license.cluster_approved', 'license.cluster_approved']);
  });
});

test('access: any caller reads the status and usage; admin:read lists parked registrations; admin:write alone changes anything', async () => {
  expect((await call(a.viewer, 'GET', '/license/usage')).status).toBe(200);
  expect((await call(a.viewer, 'GET', '/license/pending-clusters')).status).toBe(403);
  await insertPending(api.deps.db, a.tenantId, 'viewer-cannot');
  for (const [method, path, body] of [
    ['POST', '/license/activate', { license_key: devKey() }],
    ['POST', '/license/deactivate', undefined],
    ['DELETE', '/license/pending-clusters/viewer-cannot', undefined],
    ['POST', '/license/pending-clusters/viewer-cannot/approve', undefined],
  ] as const) {
    expect((await call(a.viewer, method, path, body)).status).toBe(403);
  }
  expect((await call(a.admin, 'GET', '/license')).body.edition).toBe('free');
});

test("tenant isolation: a tenant never sees or acts on another's license, usage or parked registrations", async () => {
  const t = await freshTenant();
  await call(t.admin, 'POST', '/license/activate', { license_key: devKey({ edition: 'airgapped', clusters: 12 }) });
  await insertAgents(api.deps.db, t.tenantId, [{ clusterId: 'only-t', nodes: 3, ageSeconds: 1 }]);
  await insertPending(api.deps.db, t.tenantId, 'parked-in-t');
  expect((await call(b.admin, 'GET', '/license')).body).toMatchObject({ edition: 'free', has_license: false });
  expect((await call(b.admin, 'GET', '/license/usage')).body.resource_usage[0].used).toBe(0);
  expect((await call(b.admin, 'GET', '/license/pending-clusters')).body).toEqual([]);
  expect((await call(b.admin, 'DELETE', '/license/pending-clusters/parked-in-t')).status).toBe(404);
  expect((await call(b.admin, 'POST', '/license/pending-clusters/parked-in-t/approve')).status).toBe(404);
  expect((await call(b.admin, 'POST', '/license/deactivate')).status).toBe(200);
  expect((await call(t.viewer, 'GET', '/license')).body).toMatchObject({ edition: 'airgapped', has_license: true });
  expect((await call(t.admin, 'GET', '/license/pending-clusters')).body).toHaveLength(1);
});
