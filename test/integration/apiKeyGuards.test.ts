import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { API_KEY_LOOKUP_LENGTH } from '../../core/auth/tokens';
import { bearer, callApi, jsonOf, sessionToken, startApi, type TestApi } from '../support/harness';

// What stops an API key from doing more than its creator, and a guessed or leaked prefix from
// buying CPU: through the real HTTP surface.
const run = randomUUID().slice(0, 8);
let api: TestApi;
let admin: { token: string; tenantId: string; userId: string };
beforeAll(async () => {
  api = await startApi();
  admin = await sessionToken({ tenant: `keys-${run}`, email: 'admin@keys.test', roles: ['admin'] });
});
afterAll(() => api.close());

const newKey = (token: string, scopes: string[]) =>
  callApi(api, token, 'POST', '/admin/api-keys', { name: `k-${randomUUID().slice(0, 6)}`, scopes });

/** A token of the right shape with `prefix` and random characters after it: it matches no key. */
const guessWithPrefix = (prefix: string) => (prefix + 'x'.repeat(80)).slice(0, 80);

describe('a key carries only scopes its creator holds', () => {
  test('an admin may not mint internal:service, which no built-in role grants: 403 naming the scope, audited as a failure', async () => {
    const res = await newKey(admin.token, ['catalog:read', 'internal:service']);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual(
      expect.objectContaining({
        code: 'FORBIDDEN',
        details: [{ field: 'body.scopes', message: 'you do not hold internal:service' }],
      }),
    );
    const activity = await callApi(api, admin.token, 'GET', '/admin/activity?limit=5');
    expect(activity.body.items[0]).toEqual(
      expect.objectContaining({ eventType: 'api_key.created', status: 'failure' }),
    );
  });

  test('a key with admin:write but only catalog:read may create a catalog:read key, not a catalog:write one', async () => {
    const parent = await newKey(admin.token, ['admin:write', 'catalog:read']);
    expect(parent.status).toBe(201);
    expect((await newKey(parent.body.token, ['catalog:write'])).status).toBe(403);
    const child = await newKey(parent.body.token, ['catalog:read', 'admin:read']);
    expect(child.status).toBe(201);
    // The listing says who created each key: the user it counts against, and the key that made it.
    const { body } = await callApi(api, admin.token, 'GET', '/admin/api-keys');
    const listed = body.keys.find((key: { id: string }) => key.id === child.body.id);
    expect(listed).toEqual(expect.objectContaining({ created_by: admin.userId, created_by_key_id: parent.body.id }));
    expect(body.keys.find((key: { id: string }) => key.id === parent.body.id)).toEqual(
      expect.objectContaining({ created_by: admin.userId, created_by_key_id: null }),
    );
  });

  test('scopes implied by what the creator holds are allowed (admin:write covers admin:read)', async () => {
    expect((await newKey(admin.token, ['admin:read', 'forge:read', 'k8s-agents:create'])).status).toBe(201);
  });
});

describe('failed validations are rate-limited per key prefix and client', () => {
  test('after 10 failures with one prefix the 11th is a 429 with Retry-After; another prefix and a cached valid key still work', async () => {
    const key = await newKey(admin.token, ['catalog:read']);
    const ok = () => fetch(`${api.url}/api/v1/me`, { headers: bearer(key.body.token) });
    expect((await ok()).status).toBe(200); // validated once, now cached

    const prefix = key.body.token.slice(0, API_KEY_LOOKUP_LENGTH);
    const guess = () => fetch(`${api.url}/api/v1/me`, { headers: bearer(guessWithPrefix(prefix)) });
    for (let i = 0; i < 10; i++) expect((await guess()).status).toBe(401);
    const limited = await guess();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await jsonOf(limited)).error.code).toBe('RATE_LIMITED');

    // The limit is the prefix's: a different prefix is still judged (401), not refused.
    const other = guessWithPrefix(`shp_svc_${randomUUID().slice(0, 4)}`);
    expect((await fetch(`${api.url}/api/v1/me`, { headers: bearer(other) })).status).toBe(401);
    expect((await ok()).status).toBe(200);
  });
});

describe('a prefix has one failure budget across every client address', () => {
  /** A GET /me from the loopback address `from` (any of 127.0.0.0/8 reaches the server). */
  const meFrom = (from: string, token: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${api.url}/api/v1/me`, { localAddress: from, headers: bearer(token) }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });

  test('60 wrong tries sent at once from 3 addresses: at most SHIPYARD_AUTH_FAILURES_PER_PREFIX (20) are judged (401, one bcrypt each), the rest are 429 before any compare', async () => {
    const key = await newKey(admin.token, ['catalog:read']);
    const prefix = key.body.token.slice(0, API_KEY_LOOKUP_LENGTH);
    // Distinct tokens, so the key cache cannot fold them into one validation.
    const guesses = Array.from({ length: 60 }, (_, i) =>
      meFrom(`127.0.0.${1 + (i % 3)}`, (prefix + randomUUID().replace(/-/g, '') + 'x'.repeat(80)).slice(0, 80)),
    );
    const statuses = await Promise.all(guesses);
    const judged = statuses.filter((status) => status === 401).length;
    expect(statuses.filter((status) => status !== 401 && status !== 429 && status !== 503)).toEqual([]);
    expect(judged).toBeGreaterThan(0);
    expect(judged).toBeLessThanOrEqual(api.deps.config.limits.auth.failuresPerPrefix);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(
      60 - api.deps.config.limits.auth.failuresPerPrefix,
    );
  }, 30_000);
});
