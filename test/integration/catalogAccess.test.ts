import { useCatalogSuite, type EntityBody } from '../support/catalogSuite';

// Who may do what in the catalog (catalog:read lists, catalog:write creates and updates,
// catalog:admin deletes), and that another tenant sees none of it through any catalog route.

const { suite, call, uniqueId, createEntity, apiKey, age } = useCatalogSuite();

describe('scopes', () => {
  let keys: Record<'read' | 'write' | 'admin', string>;
  let entity: EntityBody;
  beforeAll(async () => {
    keys = {
      read: await apiKey(['catalog:read']),
      write: await apiKey(['catalog:write']),
      admin: await apiKey(['catalog:admin']),
    };
    entity = await createEntity({ name: uniqueId('guarded') });
  });

  test('catalog:read lists and reads but cannot create, update or delete', async () => {
    expect((await call(keys.read, 'GET', '/entities')).status).toBe(200);
    expect((await call(keys.read, 'GET', `/entities/${entity.id}`)).status).toBe(200);
    expect((await call(keys.read, 'GET', '/stats')).status).toBe(200);
    expect((await call(keys.read, 'POST', '/entities', { name: uniqueId('no'), type: 'tool' })).status).toBe(403);
    expect((await call(keys.read, 'PUT', `/entities/${entity.id}`, { tier: 'tier4' })).status).toBe(403);
    expect((await call(keys.read, 'DELETE', `/entities/${entity.id}`)).status).toBe(403);
  });

  test('catalog:write creates and updates but cannot delete', async () => {
    const created = await call(keys.write, 'POST', '/entities', { name: uniqueId('by-key'), type: 'tool' });
    expect(created.status).toBe(201);
    expect((await call(keys.write, 'PUT', `/entities/${created.body.id}`, { tier: 'tier4' })).status).toBe(200);
    expect((await call(keys.write, 'DELETE', `/entities/${created.body.id}`)).status).toBe(403);
    const log = await call(keys.write, 'GET', `/entities/${created.body.id}/changelog`);
    expect(log.body.entries[0]).toMatchObject({ field: 'tier', actor: expect.stringMatching(/^api-key:/) });
  });

  test('catalog:admin deletes', async () => {
    const doomed = await createEntity({ name: uniqueId('doomed') });
    expect((await call(keys.admin, 'DELETE', `/entities/${doomed.service_id}`)).status).toBe(204);
  });

  test('a key without a catalog scope reads nothing', async () => {
    const forge = await apiKey(['forge:read']);
    expect((await call(forge, 'GET', '/entities')).status).toBe(403);
    expect((await call(forge, 'GET', `/entities/${entity.id}`)).status).toBe(403);
  });
});

describe('tenant isolation', () => {
  let hidden: EntityBody;
  beforeAll(async () => {
    const neighbour = await createEntity({ name: uniqueId('neighbour') });
    hidden = await createEntity({
      service_id: uniqueId('hidden'),
      name: `hidden ${suite.run}`,
      type: 'ml-model',
      lifecycle: 'experimental',
      owner: 'admin@a.test',
      tags: ['lang:cobol'],
      relations: [{ type: 'depends_on', target: neighbour.service_id }],
    });
    await age(suite.adminA.tenantId, hidden.id, { inactive: 365, old: 400 });
  });

  const asB = (method: string, path: string, body?: unknown) => call(suite.adminB.token, method, path, body);

  test.each(['', '/changelog', '/readme', '/activity', '/relations', '/topology', '/quick-actions', '/status'])(
    'tenant B gets a 404 for GET /entities/{id}%s by id and by service_id',
    async (sub) => {
      expect((await asB('GET', `/entities/${hidden.id}${sub}`)).status).toBe(404);
      expect((await asB('GET', `/entities/${hidden.service_id}${sub}`)).status).toBe(404);
    },
  );

  test('tenant B cannot update or delete it, and it stays as it was', async () => {
    expect((await asB('PUT', `/entities/${hidden.id}`, { name: 'taken' })).status).toBe(404);
    expect((await asB('DELETE', `/entities/${hidden.service_id}`)).status).toBe(404);
    const res = await call(suite.adminA.token, 'GET', `/entities/${hidden.id}`);
    expect(res.body.name).toBe(`hidden ${suite.run}`);
  });

  test('tenant B can neither relate to it nor reuse its service_id as a target', async () => {
    const res = await asB('POST', '/entities', {
      name: uniqueId('reacher'),
      type: 'service',
      relations: [
        { type: 'depends_on', target: hidden.id },
        { type: 'depends_on', target: hidden.service_id },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toHaveLength(2);
  });

  test('tenant B never sees it in lists, stats, summary or zombies', async () => {
    const list = await asB('GET', `/entities?search=${suite.run}`);
    expect(list.body.entities).toEqual([]);
    expect((await asB('GET', '/entities?type=ml-model')).body.page.total).toBe(0);
    expect((await asB('GET', '/entities/zombies?inactiveDays=1')).body.entities).toEqual([]);
    expect((await asB('GET', '/stats')).body.total_entities).toBe(0);
    expect((await asB('GET', '/entities/summary')).body.by_type['ml-model']).toBe(0);
    expect((await asB('GET', '/stats/languages')).body.languages).toEqual([]);
    expect((await asB('GET', '/stats/unowned')).body).toMatchObject({ unowned: 0, unknown_owner: 0 });
  });

  test('the same service_id in tenant B is a separate entity, and B’s topology holds only B’s', async () => {
    const own = await createEntity({ service_id: hidden.service_id, name: 'B’s own' }, suite.adminB.token);
    expect(own.id).not.toBe(hidden.id);
    const topology = await asB('GET', `/entities/${hidden.service_id}/topology?depth=5`);
    expect(topology.body.nodes.map((n: { id: string }) => n.id)).toEqual([own.id]);
    expect(topology.body.edges).toEqual([]);
  });
});
