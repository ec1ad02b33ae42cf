import { randomUUID } from 'node:crypto';
import { useTeamsSuite } from '../support/teamsSuite';

// Team hierarchy, and a team's members, group mappings and roles over real HTTP.

const teams = useTeamsSuite();
const { call, createTeam, uniqueName } = teams;
let run: string;
let adminA: { token: string; tenantId: string; userId: string };
let viewerA: { token: string; userId: string };
beforeAll(() => ({ run, adminA, viewerA } = teams.suite));

describe('team hierarchy', () => {
  test('a parent must be a team of the tenant, and no move may make a team its own ancestor; each refused move is audited as a failure', async () => {
    const a = await createTeam({ name: uniqueName('Root') });
    const b = await createTeam({ name: uniqueName('Middle'), parent_id: a.id });
    const c = await createTeam({ name: uniqueName('Leaf'), parent_id: b.id });
    expect(c.parent_id).toBe(b.id);

    const self = await call(adminA.token, 'PUT', `/admin/teams/${a.id}`, { parent_id: a.id });
    expect(self.status).toBe(409);
    expect(self.body.error.message).toMatch(/own parent/);
    const cycle = await call(adminA.token, 'PUT', `/admin/teams/${a.id}`, { parent_id: c.id });
    expect(cycle.status).toBe(409);
    expect(cycle.body.error.message).toMatch(/own ancestor/);
    expect((await call(adminA.token, 'PUT', `/admin/teams/${b.id}`, { parent_id: c.id })).status).toBe(409);
    expect((await call(adminA.token, 'GET', `/admin/teams/${a.id}`)).body.parent_id).toBeNull();
    // Each refused move leaves a failure entry on the team, though its transaction rolled back.
    const refusals = (await call(adminA.token, 'GET', `/teams/${a.id}`)).body.audit_log.filter(
      (e: { status: string }) => e.status === 'failure',
    );
    expect(refusals).toEqual([
      expect.objectContaining({
        eventType: 'team.updated',
        action: 'update',
        targetId: a.id,
        errorMessage: expect.stringMatching(/own ancestor/),
      }),
      expect.objectContaining({
        eventType: 'team.updated',
        action: 'update',
        targetId: a.id,
        errorMessage: expect.stringMatching(/own parent/),
      }),
    ]);

    const missing = await call(adminA.token, 'PUT', `/admin/teams/${c.id}`, { parent_id: randomUUID() });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ field: 'body.parent_id', message: 'no such team' }]);
    expect((await call(adminA.token, 'POST', '/admin/teams', { name: 'orphan', parent_id: randomUUID() })).status).toBe(
      400,
    );

    // Allowed moves: a leaf under the root, and clearing a parent.
    expect((await call(adminA.token, 'PUT', `/admin/teams/${c.id}`, { parent_id: a.id })).body.parent_id).toBe(a.id);
    expect((await call(adminA.token, 'PUT', `/admin/teams/${b.id}`, { parent_id: null })).body.parent_id).toBeNull();
  });

  test('deleting a parent keeps its children, without a parent', async () => {
    const parent = await createTeam({ name: uniqueName('Parent') });
    const child = await createTeam({ name: uniqueName('Child'), parent_id: parent.id });
    expect((await call(adminA.token, 'DELETE', `/admin/teams/${parent.id}`)).status).toBe(204);
    expect((await call(adminA.token, 'GET', `/admin/teams/${child.id}`)).body.parent_id).toBeNull();
  });
});

describe('members, mappings and roles', () => {
  test('members: add, list, duplicate 409, unknown user 404, bad role 400, remove, remove again 404', async () => {
    const team = await createTeam({ name: uniqueName('Members') });
    const path = `/admin/teams/${team.id}/members`;
    const added = await call(adminA.token, 'POST', path, { user_id: viewerA.userId, role: 'member' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ user_id: viewerA.userId, name: 'viewer', email: 'viewer@a.test', role: 'member' });
    expect((await call(adminA.token, 'GET', path)).body).toEqual({ members: [added.body], next_cursor: '' });
    expect((await call(adminA.token, 'POST', path, { user_id: viewerA.userId, role: 'lead' })).status).toBe(409);
    expect((await call(adminA.token, 'POST', path, { user_id: randomUUID(), role: 'member' })).status).toBe(404);
    expect((await call(adminA.token, 'POST', path, { user_id: adminA.userId, role: 'owner' })).status).toBe(400);
    expect((await call(adminA.token, 'POST', path, { user_id: adminA.userId })).status).toBe(400);
    expect(
      (
        await call(adminA.token, 'POST', `/admin/teams/${randomUUID()}/members`, {
          user_id: adminA.userId,
          role: 'member',
        })
      ).status,
    ).toBe(404);
    expect((await call(adminA.token, 'DELETE', `${path}/${viewerA.userId}`)).status).toBe(204);
    expect((await call(adminA.token, 'DELETE', `${path}/${viewerA.userId}`)).status).toBe(404);
    expect((await call(adminA.token, 'DELETE', `${path}/nope`)).status).toBe(400);
  });

  test('mappings: add with the default role, list, duplicate 409, bad provider 400, remove; another team cannot remove it', async () => {
    const team = await createTeam({ name: uniqueName('Mapped') });
    const other = await createTeam({ name: uniqueName('Other') });
    const path = `/admin/teams/${team.id}/mappings`;
    const added = await call(adminA.token, 'POST', path, { group_name: `eng-${run}`, provider: 'idp-a' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: expect.any(String), group_name: `eng-${run}`, provider: 'idp-a', role: 'member' });
    expect((await call(adminA.token, 'GET', path)).body).toEqual({ mappings: [added.body], next_cursor: '' });
    expect(
      (await call(adminA.token, 'POST', path, { group_name: `eng-${run}`, provider: 'idp-a', role: 'lead' })).status,
    ).toBe(409);
    expect((await call(adminA.token, 'POST', path, { group_name: `eng-${run}`, provider: 'idp-b' })).status).toBe(201);
    expect((await call(adminA.token, 'POST', path, { group_name: 'x', provider: 'okta' })).status).toBe(400);
    expect((await call(adminA.token, 'POST', path, { group_name: '', provider: 'idp-a' })).status).toBe(400);
    expect((await call(adminA.token, 'DELETE', `/admin/teams/${other.id}/mappings/${added.body.id}`)).status).toBe(404);
    expect((await call(adminA.token, 'DELETE', `${path}/${added.body.id}`)).status).toBe(204);
    expect((await call(adminA.token, 'DELETE', `${path}/${added.body.id}`)).status).toBe(404);
  });

  test('team roles: add by built-in name or bundle name (stored as its id), list, duplicate 409, unknown 404, remove by either', async () => {
    const team = await createTeam({ name: uniqueName('Roled') });
    const bundle = (
      await call(adminA.token, 'POST', '/admin/role-bundles', {
        name: `team-bundle-${run}`,
        permissions: ['forge:read'],
      })
    ).body;
    const path = `/admin/teams/${team.id}/roles`;
    expect((await call(adminA.token, 'POST', path, { role_id: 'viewer' })).status).toBe(201);
    const byName = await call(adminA.token, 'POST', path, { role_id: bundle.name });
    expect(byName.status).toBe(201);
    expect(byName.body).toEqual(expect.objectContaining({ id: bundle.id, name: bundle.name, built_in: false }));
    expect((await call(adminA.token, 'GET', path)).body.roles.map((r: { id: string }) => r.id)).toEqual([
      'viewer',
      bundle.id,
    ]);
    expect((await call(adminA.token, 'POST', path, { role_id: bundle.id })).status).toBe(409);
    expect((await call(adminA.token, 'POST', path, { role_id: 'root' })).status).toBe(404);
    expect((await call(adminA.token, 'POST', path, { role: 'viewer' })).status).toBe(400);
    expect((await call(adminA.token, 'DELETE', `${path}/${encodeURIComponent(bundle.name)}`)).status).toBe(204);
    expect((await call(adminA.token, 'DELETE', `${path}/viewer`)).status).toBe(204);
    expect((await call(adminA.token, 'DELETE', `${path}/viewer`)).status).toBe(404);
  });
});
