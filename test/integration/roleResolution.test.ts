import { sessionToken } from '../support/harness';
import { useRolesSuite } from '../support/rolesSuite';

// How a user with no direct role gains and loses permissions through teams and identity-provider groups; groups.

const roles = useRolesSuite();
const { call, newBundle, permissionsOf, adminWriteStatus } = roles;
let run: string;
let tenantA: string;
let adminA: string;
let plain: { token: string; userId: string };
beforeAll(() => ({ run, tenantA, adminA, plain } = roles.suite));

describe('role resolution end to end: a user with no direct role', () => {
  test('(a) gets admin:write through a role of a team they are a member of, and loses it when the team role goes', async () => {
    const user = await sessionToken({ tenant: tenantA, email: `team-member-${run}@a.test` });
    expect(await permissionsOf(user.token)).not.toContain('admin:write');
    expect(await adminWriteStatus(user.token)).toBe(403);

    const team = (await call(adminA, 'POST', '/admin/teams', { name: `Admins via membership ${run}` })).body;
    await call(adminA, 'POST', `/admin/teams/${team.id}/members`, { user_id: user.userId, role: 'member' });
    expect((await call(adminA, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'admin' })).status).toBe(201);
    expect(await permissionsOf(user.token)).toContain('admin:write');
    expect((await call(user.token, 'GET', '/me')).body.roles).toEqual(['admin']);
    expect(await adminWriteStatus(user.token)).toBe(201);

    expect((await call(adminA, 'DELETE', `/admin/teams/${team.id}/roles/admin`)).status).toBe(204);
    expect(await permissionsOf(user.token)).not.toContain('admin:write');
    expect(await adminWriteStatus(user.token)).toBe(403);
  });

  test('(a) also loses it when removed from the team', async () => {
    const user = await sessionToken({ tenant: tenantA, email: `team-leaver-${run}@a.test` });
    const team = (await call(adminA, 'POST', '/admin/teams', { name: `Leavers ${run}` })).body;
    await call(adminA, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'admin' });
    await call(adminA, 'POST', `/admin/teams/${team.id}/members`, { user_id: user.userId, role: 'lead' });
    expect(await adminWriteStatus(user.token)).toBe(201);
    expect((await call(adminA, 'DELETE', `/admin/teams/${team.id}/members/${user.userId}`)).status).toBe(204);
    expect(await adminWriteStatus(user.token)).toBe(403);
  });

  test("(b) gets admin:write through a team role when the token's group is mapped to the team, and loses it when the mapping goes", async () => {
    const group = `g1-${run}`;
    const user = await sessionToken({ tenant: tenantA, email: `group-member-${run}@a.test`, groups: [group] });
    expect(await adminWriteStatus(user.token)).toBe(403);

    const team = (await call(adminA, 'POST', '/admin/teams', { name: `Admins via group ${run}` })).body;
    await call(adminA, 'POST', `/admin/teams/${team.id}/roles`, { role_id: 'admin' });
    const mapping = await call(adminA, 'POST', `/admin/teams/${team.id}/mappings`, {
      group_name: group,
      provider: 'idp-a',
    });
    expect(mapping.status).toBe(201);
    expect(await permissionsOf(user.token)).toContain('admin:write');
    expect((await call(user.token, 'GET', '/me')).body.teams).toEqual([team.slug]);
    expect(await adminWriteStatus(user.token)).toBe(201);

    expect((await call(adminA, 'DELETE', `/admin/teams/${team.id}/mappings/${mapping.body.id}`)).status).toBe(204);
    expect(await permissionsOf(user.token)).not.toContain('admin:write');
    expect(await adminWriteStatus(user.token)).toBe(403);
  });

  test('(c) gets admin:write through POST /groups/{g}/roles, and loses it on DELETE', async () => {
    const group = `g2-${run}`;
    const user = await sessionToken({ tenant: tenantA, email: `group-role-${run}@a.test`, groups: [group] });
    expect(await adminWriteStatus(user.token)).toBe(403);

    const res = await call(adminA, 'POST', `/groups/${group}/roles`, { role: 'admin' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ group_name: group, role: expect.objectContaining({ id: 'admin' }) });
    expect(await permissionsOf(user.token)).toContain('admin:write');
    expect(await adminWriteStatus(user.token)).toBe(201);
    // Someone without the group gets nothing from it.
    expect(await adminWriteStatus(plain.token)).toBe(403);

    expect((await call(adminA, 'DELETE', `/groups/${group}/roles/admin`)).status).toBe(204);
    expect(await permissionsOf(user.token)).not.toContain('admin:write');
    expect(await adminWriteStatus(user.token)).toBe(403);
  });
});

describe('groups', () => {
  test('GET /groups lists the groups known from team mappings, group roles and sign-ins, with provider, members, roles and teams', async () => {
    const mapped = `mapped-${run}`;
    const roled = `roled-${run}`;
    const team = (await call(adminA, 'POST', '/admin/teams', { name: `Groups ${run}` })).body;
    await call(adminA, 'POST', `/admin/teams/${team.id}/mappings`, {
      group_name: mapped,
      provider: 'idp-c',
      role: 'lead',
    });
    const bundle = await newBundle(adminA);
    await call(adminA, 'POST', `/groups/${roled}/roles`, { role: 'viewer' });
    await call(adminA, 'POST', `/groups/${roled}/roles`, { role: bundle.name });
    const seen = `seen-${run}`;
    for (const [email, groups] of [
      [`m1-${run}@a.test`, [mapped, seen]],
      [`m2-${run}@a.test`, [mapped]],
    ] as const) {
      await call((await sessionToken({ tenant: tenantA, email, groups: [...groups] })).token, 'GET', '/me');
    }

    const res = await call(adminA, 'GET', '/groups');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.groups.map((g: { name: string }) => [g.name, g]));
    expect(byName[mapped]).toEqual({ name: mapped, provider: 'idp-c', member_count: 2, roles: [], teams: [team.slug] });
    expect(byName[roled]).toEqual({
      name: roled,
      provider: 'idp-a',
      member_count: 0,
      roles: [bundle.name, 'viewer'].sort(),
      teams: [],
    });
    expect(byName[seen]).toEqual({ name: seen, provider: 'idp-a', member_count: 1, roles: [], teams: [] });
  });

  test('group roles: list, duplicate 409, unknown role 404, unassigned 404, bad body 400, audited as group_role.*', async () => {
    const group = `ops/eu ${run}`;
    const path = `/groups/${encodeURIComponent(group)}/roles`;
    expect((await call(adminA, 'GET', path)).body).toEqual({ roles: [], next_cursor: '' });
    expect((await call(adminA, 'POST', path, { role: 'editor' })).status).toBe(201);
    expect((await call(adminA, 'POST', path, { role: 'editor' })).status).toBe(409);
    expect((await call(adminA, 'POST', path, { role: 'nope' })).status).toBe(404);
    expect((await call(adminA, 'POST', path, { roles: ['editor'] })).status).toBe(400);
    expect((await call(adminA, 'GET', path)).body.roles.map((r: { id: string }) => r.id)).toEqual(['editor']);
    expect((await call(adminA, 'DELETE', `${path}/viewer`)).status).toBe(404);
    expect((await call(adminA, 'DELETE', `${path}/editor`)).status).toBe(204);
    const events = (await call(adminA, 'GET', '/admin/activity?limit=100')).body.items.map(
      (i: { eventType: string }) => i.eventType,
    );
    expect(events).toEqual(expect.arrayContaining(['group_role.assigned', 'group_role.unassigned']));
  });
});
