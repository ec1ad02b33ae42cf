import { useCatalogSuite } from '../support/catalogSuite';

// Statistics, the summary and zombies, over a tenant that holds exactly the entities made here.

const { suite, call, uniqueId, createEntity, age } = useCatalogSuite();

const get = async (path: string) => {
  const res = await call(suite.adminA.token, 'GET', path);
  expect(res.status).toBe(200);
  return res.body;
};

// The spec's list, written out rather than imported, so a change to core/catalog/types.ts shows here.
const ENTITY_TYPES = [
  'service',
  'library',
  'api',
  'website',
  'tool',
  'infrastructure',
  'platform',
  'mobile-app',
  'data-pipeline',
  'ml-model',
  'documentation',
];

describe('stats', () => {
  let teamSlug: string;
  beforeAll(async () => {
    teamSlug = uniqueId('team');
    const team = await call(suite.adminA.token, 'POST', '/admin/teams', { name: 'Stats team', slug: teamSlug });
    await call(suite.adminA.token, 'POST', `/admin/teams/${team.body.id}/members`, {
      user_id: suite.adminA.userId,
      role: 'member',
    });
    const specs = [
      { type: 'service', lifecycle: 'production', tier: 'tier1', owner: teamSlug, tags: ['lang:go', 'lang:sql'] },
      { type: 'service', lifecycle: 'production', tier: 'tier2', owner: 'admin@a.test', tags: ['lang:Go'] },
      { type: 'library', lifecycle: 'deprecated', owner: 'ghost-team', tags: ['lang:typescript', 'lang:'] },
      { type: 'api' },
    ];
    for (const spec of specs) await createEntity({ name: uniqueId('stat'), ...spec });
  });

  test('/stats and /entities/summary count every type, lifecycle and tier, unset as none', async () => {
    const expected = {
      total_entities: 4,
      by_type: { ...Object.fromEntries(ENTITY_TYPES.map((t) => [t, 0])), service: 2, library: 1, api: 1 },
      by_lifecycle: { experimental: 0, development: 0, production: 2, deprecated: 1, none: 1 },
      by_tier: { tier1: 1, tier2: 1, tier3: 0, tier4: 0, none: 2 },
    };
    expect(await get('/stats')).toEqual(expected);
    expect(await get('/entities/summary')).toEqual(expected);
  });

  test('/stats/entity-types lists every type, most first', async () => {
    const { entity_types } = await get('/stats/entity-types');
    expect(entity_types).toHaveLength(ENTITY_TYPES.length);
    expect(entity_types[0]).toEqual({ type: 'service', entities: 2 });
  });

  test('/stats/languages counts lang: tags, lowercased, ignoring an empty language', async () => {
    expect((await get('/stats/languages')).languages).toEqual([
      { language: 'go', entities: 2 },
      { language: 'sql', entities: 1 },
      { language: 'typescript', entities: 1 },
    ]);
  });

  test('/stats/lifecycle lists each lifecycle in order, then none', async () => {
    expect((await get('/stats/lifecycle')).lifecycles).toEqual([
      { lifecycle: 'experimental', entities: 0 },
      { lifecycle: 'development', entities: 0 },
      { lifecycle: 'production', entities: 2 },
      { lifecycle: 'deprecated', entities: 1 },
      { lifecycle: 'none', entities: 1 },
    ]);
  });

  test('/stats/teams counts what the team slug and its members own', async () => {
    const { teams } = await get('/stats/teams');
    expect(teams).toEqual([expect.objectContaining({ slug: teamSlug, name: 'Stats team', entities: 2 })]);
  });

  test('/stats/unowned counts entities without an owner and with an owner that names nobody', async () => {
    expect(await get('/stats/unowned')).toEqual({
      unowned: 1,
      unknown_owner: 1,
      by_type: { ...Object.fromEntries(ENTITY_TYPES.map((t) => [t, 0])), api: 1 },
    });
  });
});

describe('zombies', () => {
  const tenantId = () => suite.adminA.tenantId;
  let ids: Record<string, string>;
  beforeAll(async () => {
    ids = {};
    const specs = {
      old: { inactive: 200, old: 400, lifecycle: 'production', type: 'service' },
      stale: { inactive: 120, old: 120, lifecycle: 'deprecated', type: 'library' },
      recent: { inactive: 30, old: 300, lifecycle: 'production', type: 'service' },
    };
    for (const [key, spec] of Object.entries(specs)) {
      const entity = await createEntity({
        name: uniqueId(`zombie-${key}`),
        lifecycle: spec.lifecycle,
        type: spec.type,
      });
      await age(tenantId(), entity.id, spec);
      ids[key] = entity.id;
    }
  });

  const zombieIds = async (query = '') => {
    const body = await get(`/entities/zombies?${query}`);
    return { ids: body.entities.map((e: { id: string }) => e.id), body };
  };

  test('by default: inactive for 90 days, the longest inactive first, with their inactive days', async () => {
    const { ids: found, body } = await zombieIds();
    expect(found).toEqual([ids.old, ids.stale]);
    expect(body.entities[0].inactive_days).toBe(200);
    expect(body.page).toMatchObject({ total: 2, nextCursor: null, prevCursor: null });
  });

  test.each([
    ['inactiveDays=10', ['old', 'stale', 'recent']],
    ['inactiveDays=150', ['old']],
    ['minAge=200', ['old']],
    ['inactiveDays=10&minAge=250', ['old', 'recent']],
    ['lifecycle=deprecated', ['stale']],
    ['type=service&inactiveDays=10', ['old', 'recent']],
  ])('%s', async (query, expected) => {
    expect((await zombieIds(query)).ids).toEqual(expected.map((key) => ids[key]));
  });

  test('pages with keyset cursors; limit goes up to 200', async () => {
    const first = await get('/entities/zombies?inactiveDays=10&limit=2');
    const second = await get(`/entities/zombies?inactiveDays=10&limit=2&cursor=${first.page.nextCursor}`);
    expect([...first.entities, ...second.entities].map((e: { id: string }) => e.id)).toEqual([
      ids.old,
      ids.stale,
      ids.recent,
    ]);
    expect(second.page.nextCursor).toBeNull();
    expect((await call(suite.adminA.token, 'GET', '/entities/zombies?limit=200')).status).toBe(200);
    expect((await call(suite.adminA.token, 'GET', '/entities/zombies?limit=201')).status).toBe(400);
  });

  test('a write brings an entity back to life', async () => {
    await call(suite.adminA.token, 'PUT', `/entities/${ids.stale}`, { description: 'still here' });
    expect((await zombieIds()).ids).toEqual([ids.old]);
  });
});
