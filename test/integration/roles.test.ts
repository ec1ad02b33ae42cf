import { randomUUID } from 'node:crypto';
import { sessionToken } from '../support/harness';
import { useRolesSuite } from '../support/rolesSuite';

// Roles over real HTTP: GET /roles, role bundle CRUD, direct user role assignment, access and tenant isolation.

const roles = useRolesSuite();
const { call, newBundle, permissionsOf } = roles;
let run: string;
let tenantA: string;
let tenantB: string;
let adminA: string;
let viewerA: string;
let adminB: string;
let plain: { token: string; userId: string };
beforeAll(() => ({ run, tenantA, tenantB, adminA, viewerA, adminB, plain } = roles.suite));

describe('GET /roles', () => {
  test('lists the three built-in roles and the tenant bundles, each with id, name, description, permissions and built_in', async () => {
    const bundle = await newBundle(adminA, ['forge:write']);
    const res = await call(viewerA, 'GET', '/roles');
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(res.body.roles.map((r: { id: string }) => [r.id, r]));
    expect(byId.admin).toEqual(
      expect.objectContaining({ name: 'admin', built_in: true, permissions: expect.arrayContaining(['admin:write']) }),
    );
    expect(byId.editor.built_in).toBe(true);
    expect(byId.viewer.built_in).toBe(true);
    expect(byId[bundle.id]).toEqual({
      id: bundle.id,
      name: bundle.name,
      description: 'test bundle',
      permissions: ['forge:write'],
      built_in: false,
    });
  });
});

describe('role bundles CRUD', () => {
  test('create, read, list, partial update and delete a bundle, each audited as role_bundle.*', async () => {
    const created = await call(adminA, 'POST', '/admin/role-bundles', {
      name: `crud-${run}`,
      permissions: ['catalog:write', 'forge:read'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        name: `crud-${run}`,
        description: '',
        permissions: ['catalog:write', 'forge:read'],
      }),
    );
    const id = created.body.id;
    expect((await call(adminA, 'GET', `/admin/role-bundles/${id}`)).body.name).toBe(`crud-${run}`);
    const list = await call(adminA, 'GET', '/admin/role-bundles');
    expect(list.body.bundles.map((b: { id: string }) => b.id)).toContain(id);

    const updated = await call(adminA, 'PUT', `/admin/role-bundles/${id}`, { description: 'now described' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual(
      expect.objectContaining({
        name: `crud-${run}`,
        description: 'now described',
        permissions: ['catalog:write', 'forge:read'],
      }),
    );
    const renamed = await call(adminA, 'PUT', `/admin/role-bundles/${id}`, {
      name: `crud2-${run}`,
      permissions: ['admin:read'],
    });
    expect(renamed.body).toEqual(expect.objectContaining({ name: `crud2-${run}`, permissions: ['admin:read'] }));

    expect((await call(adminA, 'DELETE', `/admin/role-bundles/${id}`)).status).toBe(204);
    expect((await call(adminA, 'GET', `/admin/role-bundles/${id}`)).status).toBe(404);
    expect((await call(adminA, 'DELETE', `/admin/role-bundles/${id}`)).status).toBe(404);

    const activity = await call(adminA, 'GET', '/admin/activity?limit=100');
    const events = activity.body.items.map((i: { eventType: string }) => i.eventType);
    expect(events).toEqual(
      expect.arrayContaining(['role_bundle.created', 'role_bundle.updated', 'role_bundle.deleted']),
    );
  });

  test('bad bundle input is a clear 4xx: duplicate or built-in names 409, unknown scopes, uuid-like names, unknown fields and empty updates 400', async () => {
    const bundle = await newBundle(adminA);
    const dup = await call(adminA, 'POST', '/admin/role-bundles', { name: bundle.name, permissions: ['catalog:read'] });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    expect(
      (await call(adminA, 'POST', '/admin/role-bundles', { name: 'Admin', permissions: ['catalog:read'] })).status,
    ).toBe(409);
    const badScope = await call(adminA, 'POST', '/admin/role-bundles', {
      name: 'x',
      permissions: ['catalog:everything'],
    });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error.code).toBe('INVALID_REQUEST');
    expect((await call(adminA, 'POST', '/admin/role-bundles', { name: 'x' })).status).toBe(400);
    expect((await call(adminA, 'POST', '/admin/role-bundles', { name: 'x', permissions: [] })).status).toBe(400);
    expect(
      (await call(adminA, 'POST', '/admin/role-bundles', { name: randomUUID(), permissions: ['catalog:read'] })).status,
    ).toBe(400);
    const extra = await call(adminA, 'POST', '/admin/role-bundles', {
      name: 'x',
      permissions: ['catalog:read'],
      owner: 'me',
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details).toEqual([{ field: 'body.owner', message: 'is not an allowed field' }]);

    const other = await newBundle(adminA);
    expect((await call(adminA, 'PUT', `/admin/role-bundles/${other.id}`, { name: bundle.name })).status).toBe(409);
    expect((await call(adminA, 'PUT', `/admin/role-bundles/${other.id}`, { name: 'viewer' })).status).toBe(409);
    // The refused creates and renames are audited as failures, with the reason.
    const { items } = (await call(adminA, 'GET', '/admin/activity?limit=100')).body;
    const failures = items.filter(
      (i: { status: string; eventType: string }) => i.status === 'failure' && i.eventType.startsWith('role_bundle.'),
    );
    expect(
      failures
        .slice(0, 4)
        .map((i: { eventType: string; errorMessage: string; targetId: string | null }) => [
          i.eventType,
          i.errorMessage,
          i.targetId,
        ]),
    ).toEqual([
      ['role_bundle.updated', '"viewer" is a built-in role name', other.id],
      ['role_bundle.updated', `A role bundle named "${bundle.name}" already exists`, other.id],
      ['role_bundle.created', '"Admin" is a built-in role name', null],
      ['role_bundle.created', `A role bundle named "${bundle.name}" already exists`, null],
    ]);
    expect((await call(adminA, 'PUT', `/admin/role-bundles/${other.id}`, {})).status).toBe(400);
    expect((await call(adminA, 'GET', '/admin/role-bundles/not-a-uuid')).status).toBe(400);
    expect((await call(adminA, 'GET', `/admin/role-bundles/${randomUUID()}`)).status).toBe(404);
    expect((await call(adminA, 'PUT', `/admin/role-bundles/${randomUUID()}`, { description: 'x' })).status).toBe(404);
  });

  test('a bundle edit reaches its holders on their next request', async () => {
    const holder = await sessionToken({ tenant: tenantA, email: `holder-${run}@a.test` });
    const bundle = await newBundle(adminA, ['catalog:read']);
    await call(adminA, 'POST', `/roles/users/${holder.userId}/roles`, { role: bundle.name });
    expect(await permissionsOf(holder.token)).toEqual(['catalog:read']);
    await call(adminA, 'PUT', `/admin/role-bundles/${bundle.id}`, { permissions: ['forge:write'] });
    expect(await permissionsOf(holder.token)).toEqual(['forge:read', 'forge:write']);
  });

  test('deleting a bundle removes every assignment of it (user, team, group) in the same transaction, and the permission goes with it', async () => {
    const holder = await sessionToken({
      tenant: tenantA,
      email: `bundle-holder-${run}@a.test`,
      groups: [`bundle-group-${run}`],
    });
    const bundle = await newBundle(adminA, ['operations:admin']);
    const team = (await call(adminA, 'POST', '/admin/teams', { name: `Bundle team ${run}` })).body;
    expect((await call(adminA, 'POST', `/roles/users/${holder.userId}/roles`, { role: bundle.id })).status).toBe(201);
    expect((await call(adminA, 'POST', `/admin/teams/${team.id}/roles`, { role_id: bundle.name })).status).toBe(201);
    expect((await call(adminA, 'POST', `/groups/bundle-group-${run}/roles`, { role: bundle.name })).status).toBe(201);
    expect(await permissionsOf(holder.token)).toContain('operations:admin');

    expect((await call(adminA, 'DELETE', `/admin/role-bundles/${bundle.id}`)).status).toBe(204);
    expect((await call(adminA, 'GET', `/users/${holder.userId}`)).body.roles).toEqual([]);
    expect((await call(adminA, 'GET', `/admin/teams/${team.id}/roles`)).body.roles).toEqual([]);
    expect((await call(adminA, 'GET', `/groups/bundle-group-${run}/roles`)).body.roles).toEqual([]);
    expect(await permissionsOf(holder.token)).not.toContain('operations:admin');
    // The team's own audit trail records that it lost the role.
    const detail = await call(adminA, 'GET', `/teams/${team.id}`);
    expect(detail.body.audit_log.map((e: { eventType: string }) => e.eventType)).toContain('team.role_unassigned');
  });
});

describe('direct user role assignment', () => {
  test('assigns and removes a built-in role by name; the user gains and loses its permissions; both are audited', async () => {
    const user = await sessionToken({ tenant: tenantA, email: `direct-${run}@a.test` });
    expect(await permissionsOf(user.token)).toEqual([]);
    const res = await call(adminA, 'POST', `/roles/users/${user.userId}/roles`, { role: 'editor' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user_id: user.userId,
      role: expect.objectContaining({ id: 'editor', name: 'editor', built_in: true }),
    });
    expect(await permissionsOf(user.token)).toContain('catalog:write');
    expect((await call(adminA, 'POST', `/roles/users/${user.userId}/roles`, { role: 'editor' })).status).toBe(409);

    expect((await call(adminA, 'DELETE', `/roles/users/${user.userId}/roles?role=editor`)).status).toBe(204);
    expect(await permissionsOf(user.token)).toEqual([]);
    expect((await call(adminA, 'DELETE', `/roles/users/${user.userId}/roles?role=editor`)).status).toBe(404);

    const activity = (await call(adminA, 'GET', '/admin/activity?limit=100')).body.items.map(
      (i: { eventType: string }) => i.eventType,
    );
    expect(activity).toEqual(expect.arrayContaining(['role.assigned', 'role.unassigned']));
  });

  test('a bundle given by name is stored by its key (id), and can be removed by either', async () => {
    const user = await sessionToken({ tenant: tenantA, email: `by-name-${run}@a.test` });
    const bundle = await newBundle(adminA, ['forge:read']);
    const res = await call(adminA, 'POST', `/roles/users/${user.userId}/roles`, { role: bundle.name });
    expect(res.body.role).toEqual(expect.objectContaining({ id: bundle.id, name: bundle.name, built_in: false }));
    expect((await call(adminA, 'POST', `/roles/users/${user.userId}/roles`, { role: bundle.id })).status).toBe(409);
    expect((await call(adminA, 'DELETE', `/roles/users/${user.userId}/roles?role=${bundle.id}`)).status).toBe(204);
  });

  test('unknown users and roles are 404, malformed ids, missing or extra fields 400', async () => {
    expect((await call(adminA, 'POST', `/roles/users/${randomUUID()}/roles`, { role: 'viewer' })).status).toBe(404);
    expect((await call(adminA, 'POST', `/roles/users/${plain.userId}/roles`, { role: 'superuser' })).status).toBe(404);
    expect((await call(adminA, 'POST', `/roles/users/${plain.userId}/roles`, { role: randomUUID() })).status).toBe(404);
    expect((await call(adminA, 'POST', '/roles/users/123/roles', { role: 'viewer' })).status).toBe(400);
    expect((await call(adminA, 'POST', `/roles/users/${plain.userId}/roles`, {})).status).toBe(400);
    expect(
      (await call(adminA, 'POST', `/roles/users/${plain.userId}/roles`, { role: 'viewer', scope: 'x' })).status,
    ).toBe(400);
    expect((await call(adminA, 'DELETE', `/roles/users/${plain.userId}/roles`)).status).toBe(400);
    expect((await call(adminA, 'DELETE', `/roles/users/${randomUUID()}/roles?role=viewer`)).status).toBe(404);
    expect((await call(adminA, 'DELETE', `/roles/users/${plain.userId}/roles?role=nope`)).status).toBe(404);
  });
});

describe('access', () => {
  test('a viewer gets 403 on every admin endpoint of roles, bundles and groups (listing groups included), but may list roles', async () => {
    const bundle = await newBundle(adminA);
    const denied = [
      ['GET', '/admin/role-bundles'],
      ['POST', '/admin/role-bundles', { name: 'v', permissions: ['catalog:read'] }],
      ['GET', `/admin/role-bundles/${bundle.id}`],
      ['PUT', `/admin/role-bundles/${bundle.id}`, { description: 'v' }],
      ['DELETE', `/admin/role-bundles/${bundle.id}`],
      ['POST', `/roles/users/${plain.userId}/roles`, { role: 'admin' }],
      ['DELETE', `/roles/users/${plain.userId}/roles?role=admin`],
      ['GET', '/groups'],
      ['GET', '/groups/g/roles'],
      ['POST', '/groups/g/roles', { role: 'admin' }],
      ['DELETE', '/groups/g/roles/admin'],
    ] as const;
    for (const [method, path, body] of denied) {
      const res = await call(viewerA, method, path, body);
      expect({ method, path, status: res.status, code: res.body.error.code }).toEqual({
        method,
        path,
        status: 403,
        code: 'FORBIDDEN',
      });
    }
    expect((await call(viewerA, 'GET', '/roles')).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  test("tenant B's admin gets 404 on tenant A's bundles and users, and never sees A's bundles or groups", async () => {
    const bundle = await newBundle(adminA, ['catalog:read'], `a-only-${run}`);
    await call(adminA, 'POST', `/groups/a-group-${run}/roles`, { role: 'viewer' });

    expect((await call(adminB, 'GET', `/admin/role-bundles/${bundle.id}`)).status).toBe(404);
    expect((await call(adminB, 'PUT', `/admin/role-bundles/${bundle.id}`, { description: 'stolen' })).status).toBe(404);
    expect((await call(adminB, 'DELETE', `/admin/role-bundles/${bundle.id}`)).status).toBe(404);
    expect((await call(adminB, 'POST', `/roles/users/${plain.userId}/roles`, { role: 'admin' })).status).toBe(404);
    expect((await call(adminB, 'DELETE', `/roles/users/${plain.userId}/roles?role=admin`)).status).toBe(404);
    // A's bundle, by id or by name, is no role at all in B.
    const userB = await sessionToken({ tenant: tenantB, email: `b-user-${run}@b.test` });
    expect((await call(adminB, 'POST', `/roles/users/${userB.userId}/roles`, { role: bundle.id })).status).toBe(404);
    expect((await call(adminB, 'POST', `/roles/users/${userB.userId}/roles`, { role: bundle.name })).status).toBe(404);
    expect((await call(adminB, 'POST', `/groups/a-group-${run}/roles`, { role: bundle.id })).status).toBe(404);
    expect((await call(adminB, 'DELETE', `/groups/a-group-${run}/roles/viewer`)).status).toBe(404);

    const roles = (await call(adminB, 'GET', '/roles')).body.roles.map((r: { id: string }) => r.id);
    expect(roles).toEqual(['admin', 'editor', 'viewer']);
    expect((await call(adminB, 'GET', '/admin/role-bundles')).body.bundles).toEqual([]);
    expect((await call(adminB, 'GET', '/groups')).body.groups).toEqual([]);
    expect((await call(adminB, 'GET', `/groups/a-group-${run}/roles`)).body.roles).toEqual([]);

    // A's data is untouched.
    expect((await call(adminA, 'GET', `/admin/role-bundles/${bundle.id}`)).body.description).toBe('test bundle');
    expect(
      (await call(adminA, 'GET', `/groups/a-group-${run}/roles`)).body.roles.map((r: { id: string }) => r.id),
    ).toEqual(['viewer']);
    // The same bundle name is free in B.
    expect(
      (await call(adminB, 'POST', '/admin/role-bundles', { name: bundle.name, permissions: ['catalog:read'] })).status,
    ).toBe(201);
  });
});
