import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { signDevSessionToken } from '../../core/auth/sessionTokens';
import { callApi, sessionToken, startApi, testConfig, type TestApi } from '../support/harness';

// The per-session principal cache on the request path: what a cached request no longer reads,
// and that a first sign-in which rolls back leaves nothing behind in the cache.
let api: TestApi;
const run = randomUUID().slice(0, 8);
const tenant = `principals-${run}`;

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

/** The SQL the API's pool sends while `work` runs. */
async function sqlDuring(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const record = (query: { sql: string }) => sent.push(query.sql);
  api.deps.db.on('query', record);
  try {
    await work();
  } finally {
    api.deps.db.off('query', record);
  }
  return sent;
}

test("a signed-in user's repeated request reads no user or role rows: one round trip opens the tenant transaction, then the route's own query", async () => {
  const { token } = await sessionToken({ tenant, email: `repeat-${run}@p.test`, roles: ['viewer'] });
  expect((await callApi(api, token, 'GET', '/roles')).status).toBe(200);
  const sent = await sqlDuring(async () => expect((await callApi(api, token, 'GET', '/roles')).status).toBe(200));
  expect(sent[0]).toMatch(/^begin; set local app\.tenant_id = '/);
  expect(sent.at(-1)).toBe('COMMIT;');
  expect(sent.filter((sql) => /\busers\b|user_roles|team_roles|group_roles/.test(sql))).toEqual([]);
});

test("on a route that opens its own transactions, a signed-in user's repeated request opens none for its principal, while an API key's still checks that the key is in force", async () => {
  const admin = await sessionToken({ tenant, email: `on-demand-${run}@p.test`, roles: ['admin'] });
  const key = await callApi(api, admin.token, 'POST', '/admin/api-keys', {
    name: `k-${run}`,
    scopes: ['catalog:read'],
  });
  expect(key.status).toBe(201);
  // Validating a manifest reads and writes nothing of its own.
  const validate = (token: string) => callApi(api, token, 'POST', '/manifests/validate', { content: 'kind: Entity\n' });
  const user = await sessionToken({ tenant, email: `validator-${run}@p.test`, roles: ['viewer'] });
  const signIn = await sqlDuring(async () => expect((await validate(user.token)).status).toBe(200));
  expect(signIn.filter((sql) => /\busers\b/.test(sql))).not.toEqual([]);
  expect(await sqlDuring(async () => expect((await validate(user.token)).status).toBe(200))).toEqual([]);

  await validate(key.body.token);
  const byKey = await sqlDuring(async () => expect((await validate(key.body.token)).status).toBe(200));
  expect(byKey[0]).toContain(`call api_key_in_force('${key.body.id}')`);
});

test('a role granted or taken away applies from the next request of a session that was cached before', async () => {
  const admin = await sessionToken({ tenant, email: `admin-${run}@p.test`, roles: ['admin'] });
  const user = await sessionToken({ tenant, email: `grantee-${run}@p.test` });
  const permissions = async () => (await callApi(api, user.token, 'GET', '/me')).body.permissions as string[];
  expect(await permissions()).not.toContain('admin:write');
  const assigned = await callApi(api, admin.token, 'POST', `/roles/users/${user.userId}/roles`, { role: 'admin' });
  expect(assigned.status).toBe(201);
  expect(await permissions()).toContain('admin:write');
  expect((await callApi(api, admin.token, 'DELETE', `/roles/users/${user.userId}/roles?role=admin`)).status).toBe(204);
  expect(await permissions()).not.toContain('admin:write');
});

test("a change committed by this process applies to the next request before the database's notification arrives", async () => {
  const admin = await sessionToken({ tenant, email: `admin-late-${run}@p.test`, roles: ['admin'] });
  const user = await sessionToken({ tenant, email: `grantee-late-${run}@p.test` });
  const permissions = async () => (await callApi(api, user.token, 'GET', '/me')).body.permissions as string[];
  expect(await permissions()).not.toContain('admin:write');
  // The listener's socket stops being read: the trigger's notification waits in it, as it would
  // on a busy database or machine.
  const listener = (api.deps.changes as unknown as { client: { connection: { stream: Socket } } }).client;
  listener.connection.stream.pause();
  try {
    const assigned = await callApi(api, admin.token, 'POST', `/roles/users/${user.userId}/roles`, { role: 'admin' });
    expect(assigned.status).toBe(201);
    expect(await permissions()).toContain('admin:write');
  } finally {
    listener.connection.stream.resume();
  }
});

test('a first sign-in whose request fails (and rolls back the new user) is not cached: the next request signs the user in again', async () => {
  const { tenantId } = await sessionToken({ tenant, email: `existing-${run}@p.test` });
  const email = `newcomer-${run}@p.test`;
  const token = await signDevSessionToken(
    testConfig(),
    { subject: `dev|${email}`, email, name: 'Newcomer', tenantId, groups: [] },
    600,
  );
  // Signs in (inserting the user) inside the request's transaction, which the 403 (no role
  // grants catalog:read) rolls back.
  expect((await callApi(api, token, 'GET', `/teams/no-such-team-${run}`)).status).toBe(403);
  const me = await callApi(api, token, 'GET', '/me');
  expect(me.status).toBe(200);
  expect(me.body.email).toBe(email);
});
