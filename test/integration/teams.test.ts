import { randomUUID } from 'node:crypto';
import { TEAMS_CACHE_TTL_MS } from '../../api/teams/cache';
import { until } from '../support/processes';
import { callApi, startApi } from '../support/harness';
import { useTeamsSuite } from '../support/teamsSuite';

// Teams over real HTTP: the per-tenant /teams cache, team CRUD, access and tenant isolation.

const teams = useTeamsSuite();
const { call, createTeam, uniqueName, slugsOf, insertBehindTheApi, advanceClock } = teams;
let run: string;
let adminA: { token: string; tenantId: string; userId: string };
let viewerA: { token: string; userId: string };
let adminB: { token: string; tenantId: string; userId: string };
beforeAll(() => ({ run, adminA, viewerA, adminB } = teams.suite));

describe('the /teams cache', () => {
  test('GET /teams is served from the per-tenant cache for 3 minutes, then reloaded', async () => {
    await call(viewerA.token, 'GET', '/teams');
    const hidden = await insertBehindTheApi(adminA.tenantId);
    advanceClock(TEAMS_CACHE_TTL_MS - 1000);
    expect(slugsOf((await call(viewerA.token, 'GET', '/teams')).body)).not.toContain(hidden);
    advanceClock(1001); // past the TTL
    expect(slugsOf((await call(viewerA.token, 'GET', '/teams')).body)).toContain(hidden);
  });

  test('a team create, update and delete are visible in GET /teams immediately afterwards', async () => {
    await call(viewerA.token, 'GET', '/teams');
    const team = await createTeam({ name: uniqueName('Cached') });
    expect(slugsOf((await call(viewerA.token, 'GET', '/teams')).body)).toContain(team.slug);
    await call(adminA.token, 'PUT', `/admin/teams/${team.id}`, { name: 'Renamed while cached' });
    const listed = (await call(viewerA.token, 'GET', '/teams')).body.teams.find(
      (t: { id: string }) => t.id === team.id,
    );
    expect(listed.name).toBe('Renamed while cached');
    await call(adminA.token, 'DELETE', `/admin/teams/${team.id}`);
    expect(slugsOf((await call(viewerA.token, 'GET', '/teams')).body)).not.toContain(team.slug);
  });

  test('a team write through one API process drops the cached list in another (Postgres NOTIFY)', async () => {
    const second = await startApi();
    try {
      const listOnSecond = async () => slugsOf((await callApi(second, viewerA.token, 'GET', '/teams')).body);
      await listOnSecond();
      const hidden = await insertBehindTheApi(adminA.tenantId);
      expect(await listOnSecond()).not.toContain(hidden); // served from the second process's cache
      await createTeam({ name: uniqueName('Elsewhere') }); // written through the first process
      // The notification arrives asynchronously after the commit; without it, 3 minutes.
      await until('the second process to drop its list', 5, async () =>
        (await listOnSecond()).includes(hidden) ? true : undefined,
      );
    } finally {
      await second.close();
    }
  });

  test('member, mapping and role writes also drop the cache (member_count updates at once)', async () => {
    const team = await createTeam({ name: uniqueName('Counted') });
    const writes: [string, string, unknown?][] = [
      ['POST', `/admin/teams/${team.id}/members`, { user_id: viewerA.userId, role: 'member' }],
      ['DELETE', `/admin/teams/${team.id}/members/${viewerA.userId}`],
      ['POST', `/admin/teams/${team.id}/mappings`, { group_name: `cache-${run}`, provider: 'idp-b' }],
      ['POST', `/admin/teams/${team.id}/roles`, { role_id: 'viewer' }],
      ['DELETE', `/admin/teams/${team.id}/roles/viewer`],
    ];
    for (const [method, path, body] of writes) {
      await call(viewerA.token, 'GET', '/teams');
      // A team the cache cannot know about: it shows up only if the write dropped the cache.
      const hidden = await insertBehindTheApi(adminA.tenantId);
      expect((await call(adminA.token, method, path, body)).status).toBeLessThan(300);
      const list = (await call(viewerA.token, 'GET', '/teams')).body;
      expect({ write: `${method} ${path}`, seen: slugsOf(list).includes(hidden) }).toEqual({
        write: `${method} ${path}`,
        seen: true,
      });
      if (path.endsWith('/members'))
        expect(list.teams.find((t: { id: string }) => t.id === team.id).member_count).toBe(1);
    }
  });
});

describe('team CRUD', () => {
  test('creates a team with a slug derived from the name, reads it by id and by slug, updates it partially, and deletes it', async () => {
    const name = `Platform Team (EU) ${run}`;
    const created = await call(adminA.token, 'POST', '/admin/teams', {
      name,
      description: 'runs the platform',
      metadata: { cost_center: 42 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        name,
        slug: `platform-team-eu-${run}`,
        description: 'runs the platform',
        metadata: { cost_center: 42 },
        parent_id: null,
      }),
    );
    const { id, slug } = created.body;

    expect((await call(adminA.token, 'GET', `/admin/teams/${id}`)).body).toEqual(created.body);
    const bySlug = await call(viewerA.token, 'GET', `/teams/${slug}`);
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toEqual({ team: created.body, members: [], group_mappings: [], roles: [] });
    expect((await call(viewerA.token, 'GET', `/teams/${id}`)).body.team.id).toBe(id);

    const updated = await call(adminA.token, 'PUT', `/admin/teams/${id}`, { description: 'changed' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual(
      expect.objectContaining({ name, slug, description: 'changed', metadata: { cost_center: 42 } }),
    );
    expect(new Date(updated.body.updated_at).getTime()).toBeGreaterThanOrEqual(
      new Date(created.body.updated_at).getTime(),
    );

    expect((await call(adminA.token, 'DELETE', `/admin/teams/${id}`)).status).toBe(204);
    expect((await call(adminA.token, 'GET', `/admin/teams/${id}`)).status).toBe(404);
    expect((await call(viewerA.token, 'GET', `/teams/${slug}`)).status).toBe(404);
    expect((await call(adminA.token, 'DELETE', `/admin/teams/${id}`)).status).toBe(404);
  });

  test('the team details carry members, group mappings, roles and, for admin:read holders only, the audit entries targeting the team', async () => {
    const team = await createTeam({ name: uniqueName('Detailed') });
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/members`, { user_id: viewerA.userId, role: 'lead' });
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/mappings`, {
      group_name: `detail-${run}`,
      provider: 'idp-d',
      role: 'viewer',
    });
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'editor' });
    await call(adminA.token, 'PUT', `/admin/teams/${team.id}`, { metadata: { tier: 1 } });

    const { body } = await call(viewerA.token, 'GET', `/teams/${team.slug}`);
    expect(body.members).toEqual([{ user_id: viewerA.userId, name: 'viewer', email: 'viewer@a.test', role: 'lead' }]);
    expect(body.group_mappings).toEqual([
      { id: expect.any(String), group_name: `detail-${run}`, provider: 'idp-d', role: 'viewer' },
    ]);
    expect(body.roles.map((r: { id: string }) => r.id)).toEqual(['editor']);
    expect(body).not.toHaveProperty('audit_log');

    const { body: asAdmin } = await call(adminA.token, 'GET', `/teams/${team.slug}`);
    expect(asAdmin.members).toEqual(body.members);
    expect(asAdmin.audit_log.map((e: { eventType: string }) => e.eventType)).toEqual([
      'team.updated',
      'team.role_assigned',
      'team.mapping_added',
      'team.member_added',
      'team.created',
    ]);
    expect(asAdmin.audit_log[0]).toEqual(
      expect.objectContaining({ actor: 'admin@a.test', actorType: 'user', status: 'success' }),
    );
  });

  test('bad team input is a clear 4xx: missing name, bad or uuid-like slug, underivable slug, unknown fields, empty update', async () => {
    const team = await createTeam({ name: uniqueName('Valid'), slug: `valid-${run}` });
    const cases: [string, string, unknown, number][] = [
      ['POST', '/admin/teams', {}, 400],
      ['POST', '/admin/teams', { name: 'x', slug: 'Not Kebab' }, 400],
      ['POST', '/admin/teams', { name: 'x', slug: randomUUID() }, 400],
      ['POST', '/admin/teams', { name: '!!!' }, 400],
      ['POST', '/admin/teams', { name: 'x', owner: 'me' }, 400],
      ['POST', '/admin/teams', { name: 'x', metadata: 'not an object' }, 400],
      ['POST', '/admin/teams', { name: 'x', parent_id: 'nope' }, 400],
      ['POST', '/admin/teams', { name: 'Other', slug: `valid-${run}` }, 409],
      ['PUT', `/admin/teams/${team.id}`, {}, 400],
      ['PUT', `/admin/teams/${team.id}`, { slug: 'renamed' }, 400],
      ['PUT', `/admin/teams/${randomUUID()}`, { name: 'x' }, 404],
      ['GET', '/admin/teams/not-a-uuid', undefined, 400],
      ['GET', `/admin/teams/${randomUUID()}`, undefined, 404],
      ['DELETE', '/admin/teams/123', undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await call(adminA.token, method, path, body);
      expect({ method, path, body, status: res.status }).toEqual({ method, path, body, status });
      expect(res.body.error.message).toEqual(expect.any(String));
    }
    await createTeam({ name: `Derived ${run}` });
    const derived = await call(adminA.token, 'POST', '/admin/teams', { name: `derived  ${run}!` });
    expect(derived.status).toBe(409);
    expect(derived.body.error.message).toMatch(/slug/);
    expect((await call(viewerA.token, 'GET', `/teams/no-such-team-${run}`)).status).toBe(404);
  });

  test('GET /teams returns every team without limit, pages with limit and cursor, and rejects bad paging input', async () => {
    for (let i = 0; i < 3; i++) await createTeam({ name: `Paged ${run} ${i}` });
    const all = (await call(viewerA.token, 'GET', '/teams')).body;
    expect(all.page).toEqual({ limit: all.teams.length, total: all.teams.length, nextCursor: null, prevCursor: null });
    expect(all.teams[0]).toEqual(
      expect.objectContaining({ id: expect.any(String), slug: expect.any(String), member_count: expect.any(Number) }),
    );

    const first = (await call(viewerA.token, 'GET', '/teams?limit=2')).body;
    expect(first.teams).toEqual(all.teams.slice(0, 2));
    expect(first.page).toEqual({ limit: 2, total: all.teams.length, nextCursor: expect.any(String), prevCursor: null });
    const second = (await call(viewerA.token, 'GET', `/teams?limit=2&cursor=${first.page.nextCursor}`)).body;
    expect(second.teams).toEqual(all.teams.slice(2, 4));
    expect((await call(viewerA.token, 'GET', '/teams?limit=0')).status).toBe(400);
    expect((await call(viewerA.token, 'GET', '/teams?limit=101')).status).toBe(400);
    expect((await call(viewerA.token, 'GET', '/teams?cursor=abc')).status).toBe(400);

    const admin = (await call(adminA.token, 'GET', '/admin/teams?limit=2')).body;
    expect(admin.teams.map((t: { id: string }) => t.id)).toEqual(
      all.teams.slice(0, 2).map((t: { id: string }) => t.id),
    );
    expect(admin.page.total).toBe(all.teams.length);
  });
});

describe('access', () => {
  test('a viewer may read /teams but gets 403 on every /admin/teams endpoint', async () => {
    const team = await createTeam({ name: uniqueName('Guarded') });
    expect((await call(viewerA.token, 'GET', '/teams')).status).toBe(200);
    const denied: [string, string, unknown?][] = [
      ['GET', '/admin/teams'],
      ['POST', '/admin/teams', { name: 'x' }],
      ['GET', `/admin/teams/${team.id}`],
      ['PUT', `/admin/teams/${team.id}`, { name: 'x' }],
      ['DELETE', `/admin/teams/${team.id}`],
      ['GET', `/admin/teams/${team.id}/members`],
      ['POST', `/admin/teams/${team.id}/members`, { user_id: viewerA.userId, role: 'lead' }],
      ['DELETE', `/admin/teams/${team.id}/members/${viewerA.userId}`],
      ['GET', `/admin/teams/${team.id}/mappings`],
      ['POST', `/admin/teams/${team.id}/mappings`, { group_name: 'g', provider: 'idp-a' }],
      ['DELETE', `/admin/teams/${team.id}/mappings/${randomUUID()}`],
      ['GET', `/admin/teams/${team.id}/roles`],
      ['POST', `/admin/teams/${team.id}/roles`, { role_id: 'admin' }],
      ['DELETE', `/admin/teams/${team.id}/roles/admin`],
    ];
    for (const [method, path, body] of denied) {
      const res = await call(viewerA.token, method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
    }
  });
});

describe('tenant isolation', () => {
  test("tenant B's admin gets 404 on every endpoint for tenant A's team, and B's lists never include A's teams", async () => {
    const team = await createTeam({ name: uniqueName('A secret') });
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/members`, { user_id: viewerA.userId, role: 'lead' });
    const mapping = (
      await call(adminA.token, 'POST', `/admin/teams/${team.id}/mappings`, { group_name: 'a-group', provider: 'idp-a' })
    ).body;
    await call(adminA.token, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'viewer' });

    const attempts: [string, string, unknown?][] = [
      ['GET', `/teams/${team.id}`],
      ['GET', `/teams/${team.slug}`],
      ['GET', `/admin/teams/${team.id}`],
      ['PUT', `/admin/teams/${team.id}`, { name: 'stolen' }],
      ['DELETE', `/admin/teams/${team.id}`],
      ['GET', `/admin/teams/${team.id}/members`],
      ['POST', `/admin/teams/${team.id}/members`, { user_id: adminB.userId, role: 'lead' }],
      ['DELETE', `/admin/teams/${team.id}/members/${viewerA.userId}`],
      ['GET', `/admin/teams/${team.id}/mappings`],
      ['POST', `/admin/teams/${team.id}/mappings`, { group_name: 'b', provider: 'idp-a' }],
      ['DELETE', `/admin/teams/${team.id}/mappings/${mapping.id}`],
      ['GET', `/admin/teams/${team.id}/roles`],
      ['POST', `/admin/teams/${team.id}/roles`, { role_id: 'admin' }],
      ['DELETE', `/admin/teams/${team.id}/roles/viewer`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(adminB.token, method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    // B cannot hang its team under A's, nor add A's user to its own team.
    expect((await call(adminB.token, 'POST', '/admin/teams', { name: 'b child', parent_id: team.id })).status).toBe(
      400,
    );
    const teamB = await createTeam({ name: uniqueName('B team') }, adminB.token);
    expect((await call(adminB.token, 'PUT', `/admin/teams/${teamB.id}`, { parent_id: team.id })).status).toBe(400);
    expect(
      (await call(adminB.token, 'POST', `/admin/teams/${teamB.id}/members`, { user_id: viewerA.userId, role: 'lead' }))
        .status,
    ).toBe(404);

    expect(slugsOf((await call(adminB.token, 'GET', '/teams')).body)).toEqual([teamB.slug]);
    expect(slugsOf((await call(adminB.token, 'GET', '/admin/teams')).body)).toEqual([teamB.slug]);
    // The same slug is free in another tenant.
    expect((await call(adminB.token, 'POST', '/admin/teams', { name: team.name, slug: team.slug })).status).toBe(201);

    const intact = (await call(adminA.token, 'GET', `/teams/${team.id}`)).body;
    expect(intact.team.name).toBe(team.name);
    expect(intact.members).toHaveLength(1);
    expect(intact.group_mappings).toHaveLength(1);
    expect(intact.roles).toHaveLength(1);
  });
});
