import { randomUUID } from 'node:crypto';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { seedCatalog, seededEntity, seededRelations } from '../../scripts/cli/seedCatalog';
import { testConfig } from '../support/harness';

// `shipyard seed` (npm run seed): what it writes, that a second run adds nothing, and that it
// writes into the named tenant only.
const config = testConfig();
const app = createPool(config.database.appUrl, 2);
const tenant = `seed-${randomUUID().slice(0, 8)}`;
afterAll(() => app.destroy());

const countsOf = (tenantId: string) =>
  withTenant(app, tenantId, async (trx) => {
    const one = async (table: string) => Number((await trx(table).count({ n: '*' }))[0].n);
    return { entities: await one('entities'), relations: await one('entity_relations'), teams: await one('teams') };
  });

test('seeding creates the tenant, its teams, every entity and the relations the generator names; a second run adds nothing', async () => {
  const first = await seedCatalog(config, { tenant, entities: 1200, teams: 12 });
  expect(first).toMatchObject({ teams: 12, entities: 1200 });
  const expectedRelations = Array.from({ length: 1200 }, (_, n) => seededRelations(n).length).reduce((a, b) => a + b);
  expect(first.relations).toBe(expectedRelations);
  expect(await countsOf(first.tenantId)).toEqual({ entities: 1200, relations: expectedRelations, teams: 12 });

  const second = await seedCatalog(config, { tenant, entities: 1200, teams: 12 });
  expect(second).toMatchObject({ tenantId: first.tenantId, entities: 0, relations: 0 });
  expect(await countsOf(first.tenantId)).toEqual({ entities: 1200, relations: expectedRelations, teams: 12 });
});

test('a seeded entity holds exactly the row its number generates, including its lang: tag', async () => {
  const { tenantId } = await seedCatalog(config, { tenant, entities: 1200, teams: 12 });
  const expected = seededEntity(42, 12, Date.now());
  const row = await withTenant(app, tenantId, (trx) =>
    trx('entities').where({ service_id: expected.service_id }).first('type', 'lifecycle', 'owner', 'tier', 'tags'),
  );
  expect(row).toEqual({
    type: expected.type,
    lifecycle: expected.lifecycle,
    owner: expected.owner,
    tier: expected.tier,
    tags: expected.tags.split(','),
  });
  expect(row.tags.some((tag: string) => tag.startsWith('lang:'))).toBe(true);
});

test('another tenant sees none of the seeded rows', async () => {
  await seedCatalog(config, { tenant, entities: 1200, teams: 12 });
  const other = await seedCatalog(config, { tenant: `seed-other-${randomUUID().slice(0, 8)}`, entities: 1, teams: 1 });
  expect(await countsOf(other.tenantId)).toEqual({ entities: 1, relations: 0, teams: 1 });
});
