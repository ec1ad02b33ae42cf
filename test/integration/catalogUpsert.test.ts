import type { UserPrincipal } from '../../core/auth/principal';
import { upsertEntity } from '../../core/catalog/entityCommands';
import type { EntityInput } from '../../core/catalog/types';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';

// upsertEntity, the write that manifests (and later agents and the crawler) go through:
// idempotent by service id, replacing what it is given, safe when two run at once.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();

const writer = (): UserPrincipal => ({
  kind: 'user',
  tenantId: suite.adminA.tenantId,
  userId: suite.adminA.userId,
  email: 'manifest-writer@a.test',
  name: 'Manifest writer',
  groups: [],
  roles: ['admin'],
  permissions: new Set(['catalog:write']),
  operator: false,
  expiresAt: new Date(Date.now() + 60_000),
});

const upsert = (input: EntityInput) =>
  withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) => upsertEntity(trx, writer(), input, 'manifest'));

const changelogOf = async (id: string) =>
  (await call(suite.adminA.token, 'GET', `/entities/${id}/changelog`)).body.entries as {
    action: string;
    field: string;
    old_value: string | null;
    new_value: string | null;
    actor: string;
  }[];

test('creates by service_id with source manifest; the same input again writes nothing', async () => {
  const target = await createEntity({ name: uniqueId('queue') });
  const input: EntityInput = {
    service_id: uniqueId('worker'),
    name: 'Worker',
    type: 'service',
    owner: 'team-ops',
    links: [{ title: 'Docs', url: 'https://docs.example/worker', icon: 'book' }],
    relations: [{ type: 'depends_on', target: target.service_id }],
    readme: { content: '# Worker', format: 'markdown' },
  };
  const first = await upsert(input);
  expect(first).toMatchObject({ created: true, entity: { source: 'manifest', owner: 'team-ops' } });
  const logged = await changelogOf(first.entity.id);

  const again = await upsert(input);
  expect(again.created).toBe(false);
  expect(again.entity.updated_at).toBe(first.entity.updated_at);
  expect(await changelogOf(first.entity.id)).toHaveLength(logged.length);
});

test('replaces the fields and relations it is given, each change logged with the writer', async () => {
  const [db, cache] = [await createEntity({ name: uniqueId('db') }), await createEntity({ name: uniqueId('cache') })];
  const serviceId = uniqueId('checkout');
  const base: EntityInput = {
    service_id: serviceId,
    name: 'Checkout',
    type: 'service',
    relations: [{ type: 'depends_on', target: db.service_id }],
  };
  const { entity } = await upsert(base);
  const { entity: changed } = await upsert({
    ...base,
    type: 'api',
    relations: [{ type: 'depends_on', target: cache.id }],
  });
  expect(changed.type).toBe('api');
  const relations = (await call(suite.adminA.token, 'GET', `/entities/${entity.id}/relations`)).body.relations;
  expect(relations.map((r: { entity: { id: string } }) => r.entity.id)).toEqual([cache.id]);
  const updates = (await changelogOf(entity.id)).filter((e) => e.action === 'updated');
  expect(updates.map((e) => e.field).sort()).toEqual(['relations', 'type']);
  expect(updates.find((e) => e.field === 'relations')).toMatchObject({
    old_value: JSON.stringify([{ type: 'depends_on', target: db.service_id }]),
    new_value: JSON.stringify([{ type: 'depends_on', target: cache.service_id }]),
    actor: 'manifest-writer@a.test',
  });
});

test('two upserts of a new service_id at once: one creates, the other updates the same entity', async () => {
  const serviceId = uniqueId('racer');
  const results = await Promise.all([
    upsert({ service_id: serviceId, name: 'Racer', type: 'service', tier: 'tier1' }),
    upsert({ service_id: serviceId, name: 'Racer', type: 'service', tier: 'tier2' }),
  ]);
  expect(results.map((r) => r.created).sort()).toEqual([false, true]);
  expect(results[0].entity.id).toBe(results[1].entity.id);
});
