import { useCatalogSuite, type EntityBody } from '../support/catalogSuite';

// What the catalog knows around one entity: relations from both ends, topology, README,
// changelog, activity, quick actions and status.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();

const get = async (path: string) => {
  const res = await call(suite.adminA.token, 'GET', path);
  expect(res.status).toBe(200);
  return res.body;
};

describe('relations', () => {
  test('read from both ends: outgoing by type, incoming by the inverse name', async () => {
    const db = await createEntity({ name: uniqueId('db'), type: 'infrastructure' });
    const api = await createEntity({ name: uniqueId('orders-api'), type: 'api' });
    const system = await createEntity({ name: uniqueId('shop'), type: 'platform' });
    const app = await createEntity({
      name: uniqueId('orders'),
      relations: [
        { type: 'depends_on', target: db.service_id },
        { type: 'provides_api', target: api.id },
        { type: 'part_of', target: system.service_id },
      ],
    });
    const client = await createEntity({ name: uniqueId('web'), relations: [{ type: 'consumes_api', target: app.id }] });

    const relations = await get(`/entities/${app.service_id}/relations`);
    expect(relations.total).toBe(4);
    expect(relations.relations).toEqual([
      { type: 'depends_on', direction: 'outgoing', entity: expect.objectContaining({ id: db.id }) },
      { type: 'part_of', direction: 'outgoing', entity: expect.objectContaining({ id: system.id }) },
      { type: 'provides_api', direction: 'outgoing', entity: expect.objectContaining({ id: api.id }) },
      { type: 'api_consumed_by', direction: 'incoming', entity: expect.objectContaining({ id: client.id }) },
    ]);
    const fromDb = await get(`/entities/${db.id}/relations`);
    expect(fromDb.relations).toEqual([
      { type: 'dependency_of', direction: 'incoming', entity: expect.objectContaining({ id: app.id }) },
    ]);
    expect((await get(`/entities/${system.id}/relations`)).relations[0].type).toBe('has_part');
  });

  test('an entity cannot relate to itself', async () => {
    const serviceId = uniqueId('narcissus');
    const res = await call(suite.adminA.token, 'POST', '/entities', {
      service_id: serviceId,
      name: 'Narcissus',
      type: 'service',
      relations: [{ type: 'depends_on', target: serviceId }],
    });
    expect(res).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.relations[0].target' }] } } });
  });
});

describe('topology', () => {
  // a → b → c → d → e → f, and loop → a, loop → c: a cycle a–b–c–loop, which topology (reading
  // relations in both directions) must walk without repeating anything.
  let chain: EntityBody[];
  beforeAll(async () => {
    chain = [];
    for (const key of ['f', 'e', 'd', 'c', 'b', 'a']) {
      const next = chain[0];
      chain.unshift(
        await createEntity({
          service_id: uniqueId(`topo-${key}`),
          name: `topo ${key}`,
          relations: next ? [{ type: 'depends_on', target: next.service_id }] : [],
        }),
      );
    }
    await call(suite.adminA.token, 'POST', '/entities', { name: 'unrelated', type: 'tool' });
    const [a, , c] = chain;
    const closing = await createEntity({
      service_id: uniqueId('topo-loop'),
      name: 'topo loop',
      relations: [
        { type: 'depends_on', target: a.service_id },
        { type: 'part_of', target: c.service_id },
      ],
    });
    chain.push(closing);
  });

  const idsAt = (body: { nodes: { id: string; depth: number }[] }, depth: number) =>
    body.nodes.filter((n) => n.depth === depth).map((n) => n.id);

  test('depth 2 by default: the entity, its neighbours and theirs, each once, with the edges among them', async () => {
    const [a, b, c, , , , loop] = chain;
    const body = await get(`/entities/${a.id}/topology`);
    expect(body).toMatchObject({ root: a.id, depth: 2, truncated: false });
    expect(idsAt(body, 0)).toEqual([a.id]);
    expect(idsAt(body, 1).sort()).toEqual([b.id, loop.id].sort());
    expect(idsAt(body, 2)).toEqual([c.id]);
    expect(body.nodes).toHaveLength(4);
    const edges = body.edges.map((e: { from: string; type: string; to: string }) => `${e.from} ${e.type} ${e.to}`);
    expect(edges.sort()).toEqual(
      [
        `${a.id} depends_on ${b.id}`,
        `${b.id} depends_on ${c.id}`,
        `${loop.id} depends_on ${a.id}`,
        `${loop.id} part_of ${c.id}`,
      ].sort(),
    );
  });

  test('depth 5 reaches five relations away; the cycle repeats no node or edge', async () => {
    const [a, , , , , f] = chain;
    const body = await get(`/entities/${a.id}/topology?depth=5`);
    expect(body.nodes).toHaveLength(7);
    expect(new Set(body.nodes.map((n: { id: string }) => n.id)).size).toBe(7);
    expect(idsAt(body, 5)).toEqual([f.id]);
    expect(body.edges).toHaveLength(7);
  });

  test.each(['depth=0', 'depth=6', 'depth=two'])('%s is a 400', async (query) => {
    expect((await call(suite.adminA.token, 'GET', `/entities/${chain[0].id}/topology?${query}`)).status).toBe(400);
  });
});

describe('readme, changelog and activity', () => {
  test('the README as written; an entity without one is a 404', async () => {
    const readme = { content: '# Billing\n\nHow to run it.', format: 'markdown' };
    const withReadme = await createEntity({ name: uniqueId('billing'), readme });
    expect(await get(`/entities/${withReadme.id}/readme`)).toEqual(readme);
    const without = await createEntity({ name: uniqueId('bare') });
    const res = await call(suite.adminA.token, 'GET', `/entities/${without.id}/readme`);
    expect(res).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
  });

  test('creation logs each initial field; an identical update logs nothing', async () => {
    const entity = await createEntity({ name: uniqueId('logged'), lifecycle: 'experimental', tags: ['a'] });
    const created = (await get(`/entities/${entity.id}/changelog`)).entries;
    expect(created.map((e: { field: string }) => e.field).sort()).toEqual([
      'lifecycle',
      'name',
      'source',
      'tags',
      'type',
    ]);
    expect(
      created.every((e: { action: string; actor: string }) => e.action === 'created' && e.actor === 'admin@a.test'),
    ).toBe(true);
    await call(suite.adminA.token, 'PUT', `/entities/${entity.id}`, { lifecycle: 'experimental', tags: ['a'] });
    expect((await get(`/entities/${entity.id}/changelog`)).entries).toHaveLength(created.length);
  });

  test('activity merges audit and changelog entries, newest first', async () => {
    const entity = await createEntity({ name: uniqueId('active') });
    await call(suite.adminA.token, 'PUT', `/entities/${entity.id}`, { tier: 'tier3' });
    const { items } = await get(`/entities/${entity.id}/activity`);
    expect(items[0]).toMatchObject({ kind: 'audit', eventType: 'entity.updated', actor: 'admin@a.test' });
    expect(items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'changelog', field: 'tier', new_value: 'tier3' }),
        expect.objectContaining({ kind: 'audit', eventType: 'entity.created' }),
      ]),
    );
    const times = items.map((item: { createdAt: string }) => item.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });
});

describe('quick actions and status', () => {
  test('lists the published molds whose entity_types contain the entity’s type', async () => {
    const mold = (slug: string, entity_types: string[]) =>
      call(suite.adminA.token, 'POST', '/forge/molds', { slug, name: slug, entity_types });
    const forServices = uniqueId('restart');
    const forLibraries = uniqueId('release');
    const draft = uniqueId('draft');
    for (const [slug, types] of [
      [forServices, ['service', 'api']],
      [forLibraries, ['library']],
      [draft, ['service']],
    ] as const) {
      expect((await mold(slug, [...types])).status).toBe(201);
    }
    for (const slug of [forServices, forLibraries]) {
      expect((await call(suite.adminA.token, 'POST', `/forge/molds/${slug}/publish`)).status).toBe(200);
    }
    const service = await createEntity({ name: uniqueId('svc'), type: 'service' });
    const { quick_actions } = await get(`/entities/${service.id}/quick-actions`);
    expect(quick_actions.map((q: { slug: string }) => q.slug)).toEqual([forServices]);
    const tool = await createEntity({ name: uniqueId('tool'), type: 'tool' });
    expect((await get(`/entities/${tool.id}/quick-actions`)).quick_actions).toEqual([]);
  });

  test('a mold’s entity_types must be entity types', async () => {
    const res = await call(suite.adminA.token, 'POST', '/forge/molds', {
      slug: uniqueId('bad'),
      name: 'bad',
      entity_types: ['spaceship'],
    });
    expect(res).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.entity_types.0' }] } } });
  });

  test('status resolves the owner: a team slug, a user email with their teams, or neither', async () => {
    const slug = uniqueId('owners');
    const team = await call(suite.adminA.token, 'POST', '/admin/teams', { name: slug, slug });
    await call(suite.adminA.token, 'POST', `/admin/teams/${team.body.id}/members`, {
      user_id: suite.adminA.userId,
      role: 'lead',
    });
    const teamRef = { id: team.body.id, slug, name: slug };
    const cases = [
      [slug, 'team', [teamRef]],
      ['admin@a.test', 'user', [teamRef]],
      ['nobody@else.test', 'unknown', []],
      [null, 'none', []],
    ] as const;
    for (const [owner, kind, teams] of cases) {
      const entity = await createEntity({ name: uniqueId('owned'), owner, lifecycle: 'production' });
      const status = await get(`/entities/${entity.service_id}/status`);
      expect(status).toMatchObject({ lifecycle: 'production', owner: { value: owner, kind }, inactive_days: 0 });
      expect(status.owner.teams).toEqual(teams);
    }
  });

  test.each(['changelog', 'readme', 'activity', 'relations', 'topology', 'quick-actions', 'status'])(
    '/entities/{id}/%s of an unknown entity is a 404',
    async (sub) => {
      expect((await call(suite.adminA.token, 'GET', `/entities/never-made/${sub}`)).status).toBe(404);
    },
  );
});
