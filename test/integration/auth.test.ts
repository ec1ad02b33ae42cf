import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../core/audit/store';
import type { UserPrincipal } from '../../core/auth/principal';
import { signDevSessionToken } from '../../core/auth/sessionTokens';
import { issueAgentToken, revokeAgentTokens } from '../../core/auth/store';
import { sha256 } from '../../core/auth/tokens';
import { defineRoute } from '../../api/http/route';
import { apiRoutes } from '../../api/routes';
import { withTenant } from '../../db/tenancy';
import { bearer, jsonOf, sessionToken, startApi, testConfig, type TestApi } from '../support/harness';

// Every token kind through the real HTTP surface: where each works, where it does not, and
// that every failure looks the same.
const agentRoute = defineRoute({
  method: 'GET',
  path: '/test/agent-echo',
  tag: 'Test',
  access: 'agent',
  summary: 'answers with the calling cluster',
  responses: {
    200: {
      description: 'the cluster',
      schema: {
        type: 'object',
        required: ['cluster_id', 'tenant_id'],
        properties: { cluster_id: { type: 'string' }, tenant_id: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  handler: ({ auth }) => ({ cluster_id: auth.clusterId, tenant_id: auth.tenantId }),
});

const run = randomUUID().slice(0, 8);
let api: TestApi;
let admin: { token: string; tenantId: string; userId: string };
let viewer: { token: string };
beforeAll(async () => {
  api = await startApi({ routes: [...apiRoutes, agentRoute] });
  admin = await sessionToken({ tenant: `auth-${run}`, email: 'admin@auth.test', roles: ['admin'] });
  viewer = await sessionToken({ tenant: `auth-${run}`, email: 'viewer@auth.test', roles: ['viewer'] });
});
afterAll(() => api.close());

const call = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${api.url}/api/v1${path}`, { ...init, headers: { 'content-type': 'application/json', ...headers } });

async function createKey(token: string, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await call('/admin/api-keys', bearer(token), {
    method: 'POST',
    body: JSON.stringify({ name: `key-${randomUUID().slice(0, 6)}`, scopes, ...extra }),
  });
  expect(res.status).toBe(201);
  return jsonOf(res) as Promise<{ id: string; token: string; scopes: string[] }>;
}

async function expectGeneric401(res: Response) {
  expect(res.status).toBe(401);
  const body = await jsonOf(res);
  expect(body.error.code).toBe('UNAUTHORIZED');
  expect(body.error.message).toBe('Authentication required');
}

describe('authentication failures are one generic 401', () => {
  test('missing, malformed, forged, unknown and mis-kinded credentials all get the same answer', async () => {
    const config = testConfig();
    const otherIssuer = await signDevSessionToken(
      { ...config, auth: { ...config.auth, issuer: 'someone-else' } },
      { subject: 's', email: 'x@y.z', name: 'x', tenantId: admin.tenantId, groups: [] },
      60,
    );
    const expired = await signDevSessionToken(
      config,
      { subject: 's', email: 'x@y.z', name: 'x', tenantId: admin.tenantId, groups: [] },
      -60,
    );
    const unknownTenant = await signDevSessionToken(
      config,
      { subject: 's', email: 'x@y.z', name: 'x', tenantId: randomUUID(), groups: [] },
      60,
    );
    const [, payload] = admin.token.split('.');
    const tampered = admin.token.replace(payload, Buffer.from('{"sub":"x","tenant_id":"y"}').toString('base64url'));
    const headers = [
      {},
      { authorization: admin.token },
      { authorization: `Basic ${admin.token}` },
      { authorization: 'Bearer' },
      bearer('not-a-jwt'),
      bearer(tampered),
      bearer(otherIssuer),
      bearer(expired),
      bearer(unknownTenant),
      bearer(`shp_svc_${'a'.repeat(72)}`),
      bearer(`shp_agt_${'a'.repeat(64)}`),
    ];
    for (const header of headers) await expectGeneric401(await call('/me', header));
  });
});

describe('session tokens', () => {
  test('a valid token authenticates, upserts the user once and records last_login', async () => {
    const res = await call('/me', bearer(admin.token));
    expect(res.status).toBe(200);
    const me = await jsonOf(res);
    expect(me).toEqual(
      expect.objectContaining({
        id: admin.userId,
        email: 'admin@auth.test',
        tenant_id: admin.tenantId,
        roles: ['admin'],
      }),
    );
    await call('/me', bearer(admin.token));
    const users = await withTenant(api.deps.db, admin.tenantId, (trx) =>
      trx('users').where({ email: 'admin@auth.test' }),
    );
    expect(users).toHaveLength(1);
    expect(users[0].last_login).not.toBeNull();
  });

  test('permissions come from roles: a viewer may read but gets 403 on admin endpoints', async () => {
    expect((await call('/me', bearer(viewer.token))).status).toBe(200);
    const forbidden = await call('/admin/api-keys', bearer(viewer.token));
    expect(forbidden.status).toBe(403);
    expect((await jsonOf(forbidden)).error.code).toBe('FORBIDDEN');
  });

  test('/auth/cli/status reports who the token belongs to and when it expires', async () => {
    const status = await jsonOf(await call('/auth/cli/status', bearer(admin.token)));
    expect(status.authenticated).toBe(true);
    expect(status.user).toEqual({ email: 'admin@auth.test', name: 'admin', tenant_id: admin.tenantId });
    expect(new Date(status.expires_at).getTime()).toBeGreaterThan(Date.now());
  });
});

describe('API keys', () => {
  test('a key is shown once: the listing has its 12-character prefix, never the token or a hash', async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    expect(key.token).toMatch(/^shp_svc_[A-Za-z0-9]{72}$/);
    const listing = await jsonOf(await call('/admin/api-keys', bearer(admin.token)));
    const listed = listing.keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.prefix).toBe(key.token.slice(0, 12));
    expect(JSON.stringify(listing)).not.toContain(key.token.slice(12, 30));
    expect(JSON.stringify(listing)).not.toMatch(/\$2[aby]\$/);
  });

  test('scopes follow the hierarchy: admin:write grants admin:read; catalog:read grants nothing admin', async () => {
    const writer = await createKey(admin.token, ['admin:write']);
    expect((await call('/admin/api-keys', bearer(writer.token))).status).toBe(200);
    const reader = await createKey(admin.token, ['catalog:read']);
    expect((await call('/admin/api-keys', bearer(reader.token))).status).toBe(403);
    const me = await jsonOf(await call('/me', bearer(reader.token)));
    expect(me.permissions).toEqual(['catalog:read']);
    expect(me.api_key_id).toBe(reader.id);
  });

  test('forge:admin implies forge:read: such a key may list molds, and a catalog-only key may not', async () => {
    const forgeAdmin = await createKey(admin.token, ['forge:admin']);
    const res = await call('/forge/molds', bearer(forgeAdmin.token));
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(expect.objectContaining({ molds: expect.any(Array) }));
    const catalogOnly = await createKey(admin.token, ['catalog:admin']);
    expect((await call('/forge/molds', bearer(catalogOnly.token))).status).toBe(403);
  });

  test('last_used is recorded after use, without the request waiting for it', async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    await call('/me', bearer(key.token));
    let lastUsed: string | null = null;
    for (let i = 0; i < 20 && !lastUsed; i++) {
      const listing = await jsonOf(await call('/admin/api-keys', bearer(admin.token)));
      lastUsed = listing.keys.find((k: { id: string }) => k.id === key.id).last_used;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(lastUsed).not.toBeNull();
  });

  test('an expired key stops working, even while its validation is cached', async () => {
    const key = await createKey(admin.token, ['catalog:read'], {
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await call('/me', bearer(key.token))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    await expectGeneric401(await call('/me', bearer(key.token)));
  });

  test('an expiry in the past is refused at creation', async () => {
    const res = await call('/admin/api-keys', bearer(admin.token), {
      method: 'POST',
      body: JSON.stringify({ name: 'old', scopes: ['catalog:read'], expires_at: '2020-01-01T00:00:00Z' }),
    });
    expect(res.status).toBe(400);
  });

  test('an expiry the database cannot store (offset of 16 hours or more, year 0000) is a 400, not a 500', async () => {
    for (const expires_at of ['3194-07-02T23:27:09-21:57', '2090-01-01T00:00:00+16:00', '0000-01-01T00:00:00Z']) {
      const res = await call('/admin/api-keys', bearer(admin.token), {
        method: 'POST',
        body: JSON.stringify({ name: 'far', scopes: ['catalog:read'], expires_at }),
      });
      expect({ expires_at, status: res.status }).toEqual({ expires_at, status: 400 });
    }
    // The largest offsets PostgreSQL keeps still pass.
    const key = await createKey(admin.token, ['catalog:read'], { expires_at: '2090-01-01T00:00:00-15:59' });
    expect(key.id).toEqual(expect.any(String));
  });

  test('a revoked key fails on the very next request in every API instance, despite their caches', async () => {
    const second = await startApi();
    try {
      const key = await createKey(admin.token, ['catalog:read']);
      // Both instances have validated (and cached) the key.
      expect((await call('/me', bearer(key.token))).status).toBe(200);
      expect((await fetch(`${second.url}/api/v1/me`, { headers: bearer(key.token) })).status).toBe(200);
      expect(second.deps.apiKeyCache.get(sha256(key.token))?.keyId).toBe(key.id);
      expect((await call(`/admin/api-keys/${key.id}`, bearer(admin.token), { method: 'DELETE' })).status).toBe(204);
      await expectGeneric401(await fetch(`${second.url}/api/v1/me`, { headers: bearer(key.token) }));
      await expectGeneric401(await call('/me', bearer(key.token)));
      expect(second.deps.apiKeyCache.get(sha256(key.token))).toBeUndefined();
    } finally {
      await second.close();
    }
  });

  test('a key revoked before its notification reaches a process still fails there: every transaction checks it', async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    expect((await call('/me', bearer(key.token))).status).toBe(200);
    // Revoked without the announcement revokeApiKey makes: the process's cache keeps the key,
    // as it does for the moment between another process's commit and the notification's arrival.
    await withTenant(api.deps.db, admin.tenantId, (trx) =>
      trx('api_keys').where({ id: key.id }).update({ revoked_at: trx.fn.now() }),
    );
    expect(api.deps.apiKeyCache.get(sha256(key.token))?.keyId).toBe(key.id);
    await expectGeneric401(await call('/me', bearer(key.token)));
  });

  test('both revoke forms work; revoking twice is harmless; an unknown key is 404', async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    const res = await call(`/admin/api-keys/${key.id}/revoke`, bearer(admin.token), { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(expect.objectContaining({ id: key.id, revoked: true }));
    expect((await call(`/admin/api-keys/${key.id}`, bearer(admin.token), { method: 'DELETE' })).status).toBe(204);
    expect((await call(`/admin/api-keys/${randomUUID()}`, bearer(admin.token), { method: 'DELETE' })).status).toBe(404);
    expect((await call('/admin/api-keys/not-a-uuid', bearer(admin.token), { method: 'DELETE' })).status).toBe(400);
  });

  test('a user may hold 25 active keys; the 26th is refused (and audited as a failure) until one is revoked', async () => {
    const owner = await sessionToken({ tenant: `auth-${run}`, email: 'many-keys@auth.test', roles: ['admin'] });
    const keys = [];
    for (let i = 0; i < 25; i++) keys.push(await createKey(owner.token, ['catalog:read']));
    const refused = await call('/admin/api-keys', bearer(owner.token), {
      method: 'POST',
      body: JSON.stringify({ name: 'one-too-many', scopes: ['catalog:read'] }),
    });
    expect(refused.status).toBe(409);
    expect((await jsonOf(refused)).error.message).toMatch(/25/);
    // The refusal rolled the request back, yet its failure entry is there.
    const [latest] = (await jsonOf(await call('/admin/activity?limit=1', bearer(owner.token)))).items;
    expect(latest).toEqual(
      expect.objectContaining({
        eventType: 'api_key.created',
        action: 'create',
        actor: 'many-keys@auth.test',
        status: 'failure',
        errorMessage: expect.stringMatching(/At most 25 active API keys/),
      }),
    );
    await call(`/admin/api-keys/${keys[0].id}`, bearer(owner.token), { method: 'DELETE' });
    await createKey(owner.token, ['catalog:read']);
  }, 60_000);

  test("another tenant's admin never sees or revokes a tenant's keys, by either revoke form", async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    const other = await sessionToken({ tenant: `auth-other-${run}`, email: 'admin@other.test', roles: ['admin'] });
    const listing = await jsonOf(await call('/admin/api-keys', bearer(other.token)));
    expect(listing.keys).toEqual([]);
    expect((await call(`/admin/api-keys/${key.id}`, bearer(other.token), { method: 'DELETE' })).status).toBe(404);
    expect((await call(`/admin/api-keys/${key.id}/revoke`, bearer(other.token), { method: 'POST' })).status).toBe(404);
    expect((await call('/me', bearer(key.token))).status).toBe(200);
    const [listed] = (await jsonOf(await call('/admin/api-keys', bearer(admin.token)))).keys.filter(
      (k: { id: string }) => k.id === key.id,
    );
    expect(listed.revoked).toBe(false);
  });
});

describe('agent tokens', () => {
  const clusterId = `cluster-${run}`;
  const issue = () => withTenant(api.deps.db, admin.tenantId, (trx) => issueAgentToken(trx, admin.tenantId, clusterId));

  test('work on agent routes only, and only agent tokens work there', async () => {
    const token = await issue();
    const res = await call('/test/agent-echo', bearer(token));
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ cluster_id: clusterId, tenant_id: admin.tenantId });
    await expectGeneric401(await call('/me', bearer(token)));
    await expectGeneric401(await call('/test/agent-echo', bearer(admin.token)));
    const key = await createKey(admin.token, ['admin:write']);
    await expectGeneric401(await call('/test/agent-echo', bearer(key.token)));
  });

  test('rotation and revocation take effect at once', async () => {
    const first = await issue();
    const rotated = await issue();
    await expectGeneric401(await call('/test/agent-echo', bearer(first)));
    expect((await call('/test/agent-echo', bearer(rotated))).status).toBe(200);
    await withTenant(api.deps.db, admin.tenantId, (trx) => revokeAgentTokens(trx, clusterId));
    await expectGeneric401(await call('/test/agent-echo', bearer(rotated)));
  });
});

describe('audit log', () => {
  test('API-key actions are recorded, newest first, and the limit is clamped to 100', async () => {
    const key = await createKey(admin.token, ['catalog:read']);
    await call(`/admin/api-keys/${key.id}`, bearer(admin.token), { method: 'DELETE' });
    const { items } = await jsonOf(await call('/admin/activity?limit=2', bearer(admin.token)));
    expect(items.map((i: { eventType: string }) => i.eventType)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(items[0]).toEqual(
      expect.objectContaining({
        actor: 'admin@auth.test',
        actorType: 'user',
        action: 'revoke',
        status: 'success',
        errorMessage: null,
      }),
    );
  });

  test('with 120 entries, limit=1000 is clamped to the newest 100 and no limit gives the newest 50, newest first', async () => {
    const busy = await sessionToken({ tenant: `auth-busy-${run}`, email: 'admin@busy.test', roles: ['admin'] });
    const principal = { kind: 'user', tenantId: busy.tenantId, email: 'admin@busy.test' } as UserPrincipal;
    await withTenant(api.deps.db, busy.tenantId, async (trx) => {
      for (let i = 0; i < 120; i++)
        await recordAudit(trx, principal, {
          eventType: 'test.event',
          action: 'test',
          targetType: 'test',
          targetId: String(i),
        });
    });
    const targets = async (query: string) => {
      const res = await call(`/admin/activity${query}`, bearer(busy.token));
      expect(res.status).toBe(200);
      return (await jsonOf(res)).items.map((item: { targetId: string }) => Number(item.targetId));
    };
    const newest = (n: number) => Array.from({ length: n }, (_, i) => 119 - i);
    expect(await targets('?limit=1000')).toEqual(newest(100));
    expect(await targets('')).toEqual(newest(50));
    expect(await targets('?limit=3')).toEqual(newest(3));
  });

  test("when both tenants have entries, each tenant's activity shows only its own", async () => {
    const other = await sessionToken({ tenant: `auth-quiet-${run}`, email: 'admin@quiet.test', roles: ['admin'] });
    const otherKey = await createKey(other.token, ['catalog:read']);
    await createKey(admin.token, ['catalog:read']);
    const itemsOf = async (token: string) =>
      (await jsonOf(await call('/admin/activity?limit=100', bearer(token)))).items;
    const otherItems = await itemsOf(other.token);
    expect(otherItems).toEqual([
      expect.objectContaining({ eventType: 'api_key.created', actor: 'admin@quiet.test', targetId: otherKey.id }),
    ]);
    const ownItems = await itemsOf(admin.token);
    expect(ownItems.length).toBeGreaterThan(0);
    expect(ownItems.filter((item: { actor: string }) => item.actor === 'admin@quiet.test')).toEqual([]);
  });
});
