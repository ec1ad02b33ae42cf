import { withTenant } from '../../db/tenancy';
import { useCatalogSuite, type EntityBody } from '../support/catalogSuite';

// GET /entities: every filter, field projection, the bounds of its query, and keyset cursors
// that walk a filtered list both ways without gaps or repeats.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();

const list = async (query: string) => {
  const res = await call(suite.adminA.token, 'GET', `/entities?${query}`);
  expect(res.status).toBe(200);
  return res.body as {
    entities: EntityBody[];
    page: { limit: number; total: number; nextCursor: string | null; prevCursor: string | null };
    pagination: { total: number; page: number; pageSize: number; nextCursor: string | null };
  };
};
const serviceIds = (body: { entities: EntityBody[] }) => body.entities.map((e) => e.service_id);

describe('filters', () => {
  // Every entity of this block carries the tag, so each query below is scoped to them.
  const tag = `t-${suite.run}`;
  const serviceIdOf = (key: string) => `${key}-${suite.run}`;
  let teamSlug: string;
  beforeAll(async () => {
    teamSlug = uniqueId('team');
    const team = await call(suite.adminA.token, 'POST', '/admin/teams', { name: teamSlug, slug: teamSlug });
    await call(suite.adminA.token, 'POST', `/admin/teams/${team.body.id}/members`, {
      user_id: suite.adminA.userId,
      role: 'member',
    });
    const specs: Record<string, Record<string, unknown>> = {
      alpha: { type: 'library', lifecycle: 'production', tier: 'tier1', owner: teamSlug, tags: [tag, 'lang:go'] },
      bravo: { type: 'service', lifecycle: 'deprecated', tier: 'tier2', owner: 'admin@a.test', tags: [tag] },
      charlie: {
        type: 'service',
        lifecycle: 'production',
        owner: 'someone-else',
        description: 'Ledger reconciliation',
      },
      delta: { type: 'service', tags: [tag], relations: [{ type: 'depends_on', target: serviceIdOf('alpha') }] },
    };
    const created: Record<string, EntityBody> = {};
    for (const [key, spec] of Object.entries(specs)) {
      created[key] = await createEntity({ service_id: serviceIdOf(key), name: `${key} ${suite.run}`, ...spec });
    }
    // Written by an update: the next read must filter on it.
    await call(suite.adminA.token, 'PUT', `/entities/${created.charlie.id}`, { tags: [tag] });
    await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
      trx('manifests').insert({
        tenant_id: suite.adminA.tenantId,
        entity_id: created.bravo.id,
        service_id: created.bravo.service_id,
        manifest_type: 'backstage',
        content: 'kind: Component',
      }),
    );
  });

  test.each([
    ['type=library', ['alpha']],
    ['type=service', ['bravo', 'charlie', 'delta']],
    ['lifecycle=production', ['alpha', 'charlie']],
    ['tier=tier2', ['bravo']],
    ['owner=someone-else', ['charlie']],
    ['source=api', ['alpha', 'bravo', 'charlie', 'delta']],
    ['source=manifest', []],
    ['manifestType=backstage', ['bravo']],
    ['manifestType=shipyard', []],
    ['hasRelations=true', ['alpha', 'delta']],
    ['hasRelations=false', ['bravo', 'charlie']],
    ['search=CHAR', ['charlie']],
    [`search=bravo%20${suite.run.slice(0, 3)}`, ['bravo']],
    ['search=delta-', ['delta']],
    ['search=ledger', []],
    ['tags=lang:go', ['alpha']],
    ['type=service&lifecycle=production', ['charlie']],
  ])('%s', async (filter, expected) => {
    const body = await list(filter.startsWith('tags=') ? `${filter},${tag}` : `${filter}&tags=${tag}`);
    expect(serviceIds(body).sort()).toEqual(expected.map(serviceIdOf).sort());
    expect(body.page.total).toBe(expected.length);
  });

  test('team: entities owned by the team slug or by one of its members', async () => {
    const body = await list(`team=${teamSlug}&tags=${tag}`);
    expect(serviceIds(body).sort()).toEqual([serviceIdOf('alpha'), serviceIdOf('bravo')]);
  });
});

describe('fields and bounds', () => {
  test('fields= returns only the fields named, always with the id', async () => {
    await createEntity({ name: uniqueId('projected'), owner: 'someone' });
    const body = await list('fields=name,owner&limit=5');
    expect(body.entities.length).toBeGreaterThan(0);
    for (const entity of body.entities) expect(Object.keys(entity).sort()).toEqual(['id', 'name', 'owner']);
  });

  test('an unknown field name is a 400 naming it', async () => {
    const res = await call(suite.adminA.token, 'GET', '/entities?fields=name,secret');
    expect(res).toMatchObject({
      status: 400,
      body: { error: { details: [{ field: 'query.fields', message: expect.stringContaining('secret') }] } },
    });
  });

  test.each(['limit=0', 'limit=101', 'limit=ten', 'type=spaceship', 'lifecycle=immortal', 'unknown=1'])(
    '%s is a 400',
    async (query) => {
      expect((await call(suite.adminA.token, 'GET', `/entities?${query}`)).status).toBe(400);
    },
  );

  test.each([
    ['not base64', 'not a cursor!'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['a forged position', Buffer.from(JSON.stringify({ v: 1, d: 'next', p: '["x"]', o: 0 })).toString('base64url')],
    ['an offset cursor', '20'],
  ])('a malformed cursor (%s) is a 400', async (_what, cursor) => {
    const res = await call(suite.adminA.token, 'GET', `/entities?cursor=${encodeURIComponent(cursor)}`);
    expect(res).toMatchObject({ status: 400, body: { error: { details: [{ field: 'query.cursor' }] } } });
  });
});

describe('cursor paging', () => {
  const tag = `paged-${suite.run}`;
  const expected: string[] = [];
  beforeAll(async () => {
    // Names collide in pairs, so the id must break ties for the order to be stable.
    for (let i = 0; i < 60; i++) {
      const entity = await createEntity({
        service_id: uniqueId('paged'),
        name: `paged ${String(i % 30).padStart(2, '0')}`,
        tags: [tag],
      });
      expected.push(entity.id);
    }
    // Noise the filter must leave out.
    for (let i = 0; i < 5; i++)
      await createEntity({ service_id: uniqueId('noise'), name: `paged ${String(i).padStart(2, '0')}` });
  });

  test('limit 7 walks a filtered list of 60 forward and back, each entity exactly once, with both metadata forms', async () => {
    const pages: EntityBody[][] = [];
    let body = await list(`tags=${tag}&limit=7&fields=name`);
    expect(body.page.prevCursor).toBeNull();
    pages.push(body.entities);
    while (body.page.nextCursor) {
      expect(body.pagination).toMatchObject({ total: 60, pageSize: 7, nextCursor: body.page.nextCursor });
      body = await list(`tags=${tag}&limit=7&fields=name&cursor=${body.page.nextCursor}`);
      pages.push(body.entities);
      expect(body.pagination.page).toBe(pages.length);
    }
    expect(pages).toHaveLength(9);
    const forward = pages.flat().map((e) => e.id);
    expect(new Set(forward).size).toBe(60);
    expect([...forward].sort()).toEqual([...expected].sort());
    const names = pages.flat().map((e) => e.name as string);
    expect(names).toEqual([...names].sort());

    const backPages: string[][] = [];
    while (body.page.prevCursor) {
      body = await list(`tags=${tag}&limit=7&fields=name&cursor=${body.page.prevCursor}`);
      backPages.unshift(body.entities.map((e) => e.id));
    }
    expect(body.pagination.page).toBe(1);
    expect(backPages).toEqual(pages.slice(0, -1).map((page) => page.map((e) => e.id)));
  });

  test('a page stays put when rows are added before it', async () => {
    const first = await list(`tags=${tag}&limit=7`);
    const second = await list(`tags=${tag}&limit=7&cursor=${first.page.nextCursor}`);
    await createEntity({ service_id: uniqueId('early'), name: 'paged 00 early', tags: [tag] });
    const again = await list(`tags=${tag}&limit=7&cursor=${first.page.nextCursor}`);
    expect(again.entities.map((e) => e.id)).toEqual(second.entities.map((e) => e.id));
    expect(again.page.total).toBe(61);
  });
});
