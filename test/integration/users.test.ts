import { randomUUID } from 'node:crypto';
import { sessionToken, startApi, type TestApi, callApi, testConfig, testDeps } from '../support/harness';

// Users over real HTTP: the shape C listings, search, the user detail and tenant isolation.

const run = randomUUID().slice(0, 8);
const tenantA = `users-a-${run}`;
const tenantB = `users-b-${run}`;
let api: TestApi;
let adminA: { token: string; tenantId: string; userId: string };
let viewerA: { token: string; userId: string };
let adminB: { token: string; userId: string };
const userIds: Record<string, string> = {};

// Ten users in A besides the admin and viewer; emails sort as listed.
const PEOPLE = [
  ['alice_smith@a.test', 'Alice Smith'],
  ['alicexsmith@a.test', 'Alice X'],
  ['bob@a.test', 'Bob Jones'],
  ['carol@a.test', 'Carol 100% Sure'],
  ['dave@a.test', 'Dave'],
  ['erin@a.test', 'Erin'],
  ['frank@a.test', 'Frank'],
  ['grace@a.test', 'Grace Smith'],
  ['heidi@a.test', 'Heidi'],
  ['ivan@a.test', 'Ivan'],
] as const;

beforeAll(async () => {
  api = await startApi();
  adminA = await sessionToken({ tenant: tenantA, email: 'zz-admin@a.test', name: 'Admin', roles: ['admin'] });
  viewerA = await sessionToken({
    tenant: tenantA,
    email: 'zz-viewer@a.test',
    name: 'Viewer',
    roles: ['viewer'],
    groups: ['readers'],
  });
  adminB = await sessionToken({ tenant: tenantB, email: 'admin@b.test', roles: ['admin'] });
  for (const [email, name] of PEOPLE) userIds[email] = (await sessionToken({ tenant: tenantA, email, name })).userId;
});
afterAll(() => api.close());

const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

const emailsOf = (users: { email: string }[]) => users.map((u) => u.email);
const ALL_EMAILS = [...PEOPLE.map(([email]) => email), 'zz-admin@a.test', 'zz-viewer@a.test'];

describe('GET /users (shape C)', () => {
  test('lists every user by email with first/max defaults, under both users and items, with page metadata and total', async () => {
    const res = await call(viewerA.token, 'GET', '/users');
    expect(res.status).toBe(200);
    expect(emailsOf(res.body.users)).toEqual(ALL_EMAILS);
    expect(res.body.items).toEqual(res.body.users);
    expect(res.body.page).toEqual({ first: 0, max: 100, count: 12, hasMore: false, nextCursor: null });
    expect(res.body.total).toBe(12);
    expect(res.body.users[0]).toEqual({
      id: userIds['alice_smith@a.test'],
      email: 'alice_smith@a.test',
      name: 'Alice Smith',
      picture: null,
      last_login: null,
      created_at: expect.any(String),
    });
  });

  test('pages with first and max, and with limit and cursor', async () => {
    const page = (await call(viewerA.token, 'GET', '/users?first=3&max=4')).body;
    expect(emailsOf(page.users)).toEqual(ALL_EMAILS.slice(3, 7));
    expect(page.page).toEqual({ first: 3, max: 4, count: 4, hasMore: true, nextCursor: '7' });
    expect(page.total).toBe(12);
    const last = (await call(viewerA.token, 'GET', '/users?first=10&max=4')).body;
    expect(last.page).toEqual({ first: 10, max: 4, count: 2, hasMore: false, nextCursor: null });
    const beyond = (await call(viewerA.token, 'GET', '/users?first=50')).body;
    expect(beyond).toEqual(expect.objectContaining({ users: [], items: [], total: 12 }));

    const first = (await call(viewerA.token, 'GET', '/users?limit=5')).body;
    expect(emailsOf(first.users)).toEqual(ALL_EMAILS.slice(0, 5));
    const next = (await call(viewerA.token, 'GET', `/users?limit=5&cursor=${first.page.nextCursor}`)).body;
    expect(emailsOf(next.users)).toEqual(ALL_EMAILS.slice(5, 10));
  });

  test('search matches email or name case-insensitively, and % and _ match only themselves', async () => {
    const smith = (await call(viewerA.token, 'GET', '/users?search=SMITH')).body;
    expect(emailsOf(smith.users)).toEqual(['alice_smith@a.test', 'alicexsmith@a.test', 'grace@a.test']);
    expect(smith.total).toBe(3);
    expect(emailsOf((await call(viewerA.token, 'GET', '/users?search=alice_')).body.users)).toEqual([
      'alice_smith@a.test',
    ]);
    expect(
      emailsOf((await call(viewerA.token, 'GET', `/users?search=${encodeURIComponent('100%')}`)).body.users),
    ).toEqual(['carol@a.test']);
    expect(emailsOf((await call(viewerA.token, 'GET', `/users?search=${encodeURIComponent('%')}`)).body.users)).toEqual(
      ['carol@a.test'],
    );
    const none = (await call(viewerA.token, 'GET', '/users?search=nobody')).body;
    expect(none).toEqual(
      expect.objectContaining({ users: [], total: 0, page: expect.objectContaining({ count: 0, hasMore: false }) }),
    );
    // Filters apply before paging.
    const paged = (await call(viewerA.token, 'GET', '/users?search=smith&first=1&max=1')).body;
    expect(emailsOf(paged.users)).toEqual(['alicexsmith@a.test']);
    expect(paged.page.hasMore).toBe(true);
  });

  test('out-of-range or unknown paging parameters are 400', async () => {
    for (const query of ['max=0', 'max=201', 'first=-1', 'limit=0', 'limit=201', 'cursor=xyz', 'page=2', 'max=ten']) {
      const res = await call(viewerA.token, 'GET', `/users?${query}`);
      expect({ query, status: res.status, code: res.body.error.code }).toEqual({
        query,
        status: 400,
        code: 'INVALID_REQUEST',
      });
    }
  });
});

describe('GET /users/{id}', () => {
  test('returns UserDetail: profile, tenant, team slugs and role names (direct and through teams); no sign-in yet, no groups', async () => {
    const bob = userIds['bob@a.test'];
    const team = (await call(adminA.token, 'POST', '/admin/teams', { name: `Bob team ${run}` })).body;
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/members`, { user_id: bob, role: 'member' });
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'editor' });
    await call(adminA.token, 'POST', `/roles/users/${bob}/roles`, { role: 'viewer' });

    const res = await call(viewerA.token, 'GET', `/users/${bob}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: bob,
      email: 'bob@a.test',
      name: 'Bob Jones',
      picture: null,
      last_login: null,
      created_at: expect.any(String),
      tenant_id: adminA.tenantId,
      teams: [team.slug],
      groups: [],
      roles: ['editor', 'viewer'],
    });
  });

  test("groups are those of the user's latest sign-in, for any caller, and roles include those mapped to them", async () => {
    await call(viewerA.token, 'GET', '/me'); // a sign-in carrying the group `readers`
    await call(adminA.token, 'POST', '/groups/readers/roles', { role: 'editor' });
    for (const caller of [viewerA.token, adminA.token]) {
      const res = await call(caller, 'GET', `/users/${viewerA.userId}`);
      expect(res.body.groups).toEqual(['readers']);
      expect(res.body.roles).toEqual(['editor', 'viewer']);
      expect(res.body.last_login).toEqual(expect.any(String));
    }
    // The next sign-in without the group takes it (and its roles) away.
    const regrouped = await sessionToken({ tenant: tenantA, email: 'zz-viewer@a.test', name: 'Viewer', groups: [] });
    await call(regrouped.token, 'GET', '/me');
    const res = await call(adminA.token, 'GET', `/users/${viewerA.userId}`);
    expect(res.body.groups).toEqual([]);
    expect(res.body.roles).toEqual(['viewer']);
  });

  test('teams reached through an identity-provider group mapped to a team are listed, the same as /me and /admin/users list them', async () => {
    // A tenant of its own, so the listings of tenant A keep their users.
    const admin = await sessionToken({ tenant: `users-c-${run}`, email: 'admin@c.test', roles: ['admin'] });
    const team = (await call(admin.token, 'POST', '/admin/teams', { name: `Mapped team ${run}` })).body;
    await call(admin.token, 'POST', `/admin/teams/${team.id}/mappings`, {
      group_name: `mapped-${run}`,
      provider: 'idp-a',
    });
    const member = await sessionToken({ tenant: `users-c-${run}`, email: 'mapped@c.test', groups: [`mapped-${run}`] });
    const me = (await call(member.token, 'GET', '/me')).body; // the sign-in that records the group
    expect(me.teams).toEqual([team.slug]);
    expect((await call(admin.token, 'GET', `/users/${member.userId}`)).body.teams).toEqual(me.teams);
    const listed = (await call(admin.token, 'GET', '/admin/users?search=mapped@c.test')).body.items;
    expect(listed).toEqual([expect.objectContaining({ id: member.userId, teams: me.teams })]);
  });

  test('an unknown id is 404 and a malformed one 400', async () => {
    const missing = await call(viewerA.token, 'GET', `/users/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual(expect.objectContaining({ code: 'NOT_FOUND', message: 'User not found' }));
    expect((await call(viewerA.token, 'GET', '/users/bob')).status).toBe(400);
  });
});

describe('GET /admin/users', () => {
  test('pages with a 0-based page and pageSize, adds direct roles and team slugs, and names the provider', async () => {
    const res = await call(adminA.token, 'GET', '/admin/users?page=1&pageSize=5');
    expect(res.status).toBe(200);
    expect(emailsOf(res.body.items)).toEqual(ALL_EMAILS.slice(5, 10));
    expect(res.body.page).toEqual({ first: 5, max: 5, count: 5, hasMore: true });
    expect(res.body.total).toBe(12);
    expect(res.body.provider).toBe('idp-a');
    const all = (await call(adminA.token, 'GET', '/admin/users')).body;
    expect(all.page).toEqual({ first: 0, max: 100, count: 12, hasMore: false });
    const admin = all.items.find((u: { email: string }) => u.email === 'zz-admin@a.test');
    expect(admin).toEqual(expect.objectContaining({ id: adminA.userId, roles: ['admin'], teams: [] }));
  });

  test('/users, /admin/users and /groups name the identity provider the deployment is configured with', async () => {
    const idpB = await startApi({
      deps: await testDeps(testConfig({ auth: { ...testConfig().auth, provider: 'idp-b' } })),
    });
    try {
      for (const path of ['/users', '/admin/users']) {
        expect([path, (await callApi(idpB, adminA.token, 'GET', path)).body.provider]).toEqual([path, 'idp-b']);
      }
      // viewerA's sign-in carried the group `readers`, which no team maps: it is the deployment's provider's.
      const groups = (await callApi(idpB, adminA.token, 'GET', '/groups')).body.groups;
      expect(groups).toEqual([expect.objectContaining({ name: 'readers', provider: 'idp-b' })]);
    } finally {
      await idpB.close();
    }
  });

  test('search applies before paging, and bad parameters are 400', async () => {
    const res = await call(adminA.token, 'GET', '/admin/users?search=smith&pageSize=2');
    expect(emailsOf(res.body.items)).toEqual(['alice_smith@a.test', 'alicexsmith@a.test']);
    expect(res.body.total).toBe(3);
    expect(res.body.page.hasMore).toBe(true);
    for (const query of ['page=-1', 'pageSize=0', 'pageSize=201', 'first=0']) {
      expect((await call(adminA.token, 'GET', `/admin/users?${query}`)).status).toBe(400);
    }
  });

  test('a viewer gets 403', async () => {
    const res = await call(viewerA.token, 'GET', '/admin/users');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });
});

describe('who may read personal data', () => {
  test('emails (the user directory, team members) need catalog:read; groups and team audit entries need admin:read', async () => {
    const team = (await call(adminA.token, 'POST', '/admin/teams', { name: `Personal ${run}` })).body;
    const keyWith = async (scopes: string[]) =>
      (await call(adminA.token, 'POST', '/admin/api-keys', { name: `pd-${scopes[0]}`, scopes })).body.token;
    const forgeOnly = await keyWith(['forge:admin']);
    const catalogReader = await keyWith(['catalog:read']);
    const paths = ['/users', `/users/${viewerA.userId}`, `/teams/${team.slug}`, '/groups'];
    const statuses = async (token: string) =>
      Promise.all(paths.map(async (path) => [path, (await call(token, 'GET', path)).status]));
    expect(await statuses(forgeOnly)).toEqual(paths.map((path) => [path, 403]));
    expect(await statuses(catalogReader)).toEqual([...paths.slice(0, 3).map((path) => [path, 200]), ['/groups', 403]]);
    expect((await call(catalogReader, 'GET', `/teams/${team.slug}`)).body).not.toHaveProperty('audit_log');
    expect(await statuses(adminA.token)).toEqual(paths.map((path) => [path, 200]));
    // Everyone keeps the team list (names and counts, no emails) and their own profile.
    for (const path of ['/teams', '/me']) expect((await call(forgeOnly, 'GET', path)).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  test("tenant B's admin never lists A's users and gets 404 on A's user ids", async () => {
    const list = (await call(adminB.token, 'GET', '/users')).body;
    expect(emailsOf(list.users)).toEqual(['admin@b.test']);
    expect(list.total).toBe(1);
    expect(emailsOf((await call(adminB.token, 'GET', '/admin/users')).body.items)).toEqual(['admin@b.test']);
    expect((await call(adminB.token, 'GET', '/users?search=alice')).body.total).toBe(0);
    for (const id of [adminA.userId, userIds['bob@a.test']]) {
      expect((await call(adminB.token, 'GET', `/users/${id}`)).status).toBe(404);
    }
    // And A cannot see B's.
    expect((await call(viewerA.token, 'GET', `/users/${adminB.userId}`)).status).toBe(404);
  });
});
