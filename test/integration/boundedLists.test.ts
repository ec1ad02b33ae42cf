import { randomUUID } from 'node:crypto';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from '../support/harness';

// The lists the spec gives no pagination shape are bounded by `limit` (default 20, at most 100)
// and an opaque keyset `cursor`, answered with `next_cursor` beside the list ('' when done).
// Each list here gets more rows than a page of 2 in a tenant of its own, and is walked page by
// page to the end.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let admin: { token: string; tenantId: string; userId: string };
beforeAll(async () => {
  api = await startApi();
  admin = await sessionToken({ tenant: `bounded-${run}`, email: 'admin@bounded.test', roles: ['admin'] });
});
afterAll(() => api.close());

const call = (method: string, path: string, body?: unknown) => callApi(api, admin.token, method, path, body);

async function created(method: string, path: string, body?: unknown): Promise<Reply['body']> {
  const res = await call(method, path, body);
  expect(res.status).toBe(201);
  return res.body;
}

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

/** Every page of `path` at `limit`, following next_cursor until it is ''. */
async function walk(path: string, key: string, limit: number): Promise<{ pages: unknown[][]; rows: unknown[] }> {
  const pages: unknown[][] = [];
  let cursor = '';
  do {
    const res = await call('GET', withQuery(path, `limit=${limit}${cursor && `&cursor=${cursor}`}`));
    expect(res.status).toBe(200);
    expect(typeof res.body.next_cursor).toBe('string');
    pages.push(res.body[key]);
    cursor = res.body.next_cursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor);
  return { pages, rows: pages.flat() };
}

let teamId = '';

/** Each bounded list: its path, the key of its array, an identity per row, and how to give it 5 rows. */
const lists: {
  name: string;
  path: () => string;
  key: string;
  identity: (row: Record<string, unknown>) => unknown;
  seed: () => Promise<void>;
}[] = [
  {
    name: 'API keys',
    path: () => '/admin/api-keys',
    key: 'keys',
    identity: (row) => row.id,
    seed: async () => {
      for (let i = 0; i < 5; i++) await created('POST', '/admin/api-keys', { name: `k${i}`, scopes: ['catalog:read'] });
    },
  },
  {
    name: 'role bundles',
    path: () => '/admin/role-bundles',
    key: 'bundles',
    identity: (row) => row.id,
    seed: async () => {
      for (const name of ['b-one', 'b-two', 'B three', 'b four', 'b_five']) {
        await created('POST', '/admin/role-bundles', { name, permissions: ['catalog:read'] });
      }
    },
  },
  {
    // Built-ins first, then the bundles above: a page of 2 ends inside either part.
    name: 'roles',
    path: () => '/roles',
    key: 'roles',
    identity: (row) => row.id,
    seed: async () => {},
  },
  {
    name: 'groups',
    path: () => '/groups',
    key: 'groups',
    identity: (row) => row.name,
    seed: async () => {
      for (const group of ['g-a', 'g-b', 'G-c', 'g d', 'g-é']) {
        await created('POST', `/groups/${encodeURIComponent(group)}/roles`, { role: 'viewer' });
      }
    },
  },
  {
    name: "a group's roles",
    path: () => '/groups/g-a/roles',
    key: 'roles',
    identity: (row) => row.id,
    seed: async () => {
      for (const role of ['editor', 'admin', 'b-one', 'b-two']) {
        await created('POST', '/groups/g-a/roles', { role });
      }
    },
  },
  {
    name: 'integrations',
    path: () => '/integrations',
    key: 'integrations',
    identity: (row) => row.id,
    seed: async () => {
      for (let i = 0; i < 5; i++) await created('POST', '/integrations', { name: `i${i}`, type: 'custom', config: {} });
    },
  },
  {
    name: "a team's members",
    path: () => `/admin/teams/${teamId}/members`,
    key: 'members',
    identity: (row) => row.user_id,
    seed: async () => {
      teamId = (await created('POST', '/admin/teams', { name: `Bounded ${run}` })).id;
      // Two members share a name: the email orders them.
      for (const [email, name] of [
        ['m1@bounded.test', 'Same'],
        ['m2@bounded.test', 'Same'],
        ['m3@bounded.test', 'Ann'],
        ['m4@bounded.test', 'Zed'],
        ['m5@bounded.test', 'Bob'],
      ]) {
        const user = await sessionToken({ tenant: `bounded-${run}`, email, name, roles: [] });
        await created('POST', `/admin/teams/${teamId}/members`, { user_id: user.userId, role: 'member' });
      }
    },
  },
  {
    name: "a team's group mappings",
    path: () => `/admin/teams/${teamId}/mappings`,
    key: 'mappings',
    identity: (row) => row.id,
    seed: async () => {
      // One group of two providers: the provider orders them.
      for (const [group_name, provider] of [
        ['eng', 'idp-a'],
        ['eng', 'idp-b'],
        ['ops', 'idp-a'],
        ['dev', 'idp-c'],
        ['qa', 'idp-d'],
      ]) {
        await created('POST', `/admin/teams/${teamId}/mappings`, { group_name, provider });
      }
    },
  },
  {
    name: "a team's roles",
    path: () => `/admin/teams/${teamId}/roles`,
    key: 'roles',
    identity: (row) => row.id,
    seed: async () => {
      for (const role_id of ['viewer', 'editor', 'admin', 'b-one', 'b-two']) {
        await created('POST', `/admin/teams/${teamId}/roles`, { role_id });
      }
    },
  },
];

describe.each(lists)('$name', ({ path, key, identity, seed }) => {
  beforeAll(seed, 60_000);

  test('pages of 2 walk every row exactly once, in the order of the unbounded list', async () => {
    const all = await call('GET', path());
    expect(all.status).toBe(200);
    expect(all.body.next_cursor).toBe('');
    const everything = all.body[key].map(identity);
    expect(everything.length).toBeGreaterThan(2);
    const { pages, rows } = await walk(path(), key, 2);
    expect(pages.length).toBe(Math.ceil(everything.length / 2));
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(2);
    expect(rows.map((row) => identity(row as Record<string, unknown>))).toEqual(everything);
    expect(new Set(everything).size).toBe(everything.length);
  });

  test('a cursor this API did not issue is a 400', async () => {
    const forged = Buffer.from(JSON.stringify({ v: 1, id: 'not a position' })).toString('base64url');
    for (const cursor of ['!!!', 'bm90LWpzb24', forged]) {
      const res = await call('GET', withQuery(path(), `cursor=${cursor}`));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  test('a limit over 100 (or under 1) is a 400', async () => {
    expect((await call('GET', withQuery(path(), 'limit=101'))).status).toBe(400);
    expect((await call('GET', withQuery(path(), 'limit=0'))).status).toBe(400);
    expect((await call('GET', withQuery(path(), 'limit=100'))).status).toBe(200);
  });
});

describe('revoked and expired API keys', () => {
  test('are listed only when asked for: active by default, ?status=expired, ?status=revoked, ?status=all', async () => {
    const key = (await created('POST', '/admin/api-keys', { name: 'to revoke', scopes: ['catalog:read'] })) as {
      id: string;
    };
    expect((await call('DELETE', `/admin/api-keys/${key.id}`)).status).toBe(204);
    const ids = async (query: string) =>
      (await walk(withQuery('/admin/api-keys', query), 'keys', 100)).rows.map((row) => (row as { id: string }).id);
    const active = await ids('status=active');
    expect(await ids('')).toEqual(active);
    expect(active).not.toContain(key.id);
    expect(await ids('status=revoked')).toEqual([key.id]);
    expect(await ids('status=expired')).toEqual([]);
    expect(await ids('status=all')).toEqual([key.id, ...active]);
    expect((await call('GET', '/admin/api-keys?status=gone')).status).toBe(400);
  });
});
