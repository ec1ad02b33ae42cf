import { useCatalogSuite } from '../support/catalogSuite';

// Entity writes and reads over HTTP: create, read by id or service id, update, delete, their
// validation errors and the changelog each write leaves.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();

describe('POST /entities', () => {
  test('creates an entity with source api, readable by id and by service_id', async () => {
    const serviceId = uniqueId('payments');
    const created = await createEntity({
      service_id: serviceId,
      name: 'Payments',
      type: 'service',
      lifecycle: 'production',
      owner: 'team-payments',
      tier: 'tier1',
      tags: ['lang:go', 'pci'],
      links: [{ title: 'Runbook', url: 'https://runbooks.example/payments' }],
    });
    expect(created).toMatchObject({ service_id: serviceId, source: 'api', lifecycle: 'production', tier: 'tier1' });
    const byId = await call(suite.adminA.token, 'GET', `/entities/${created.id}`);
    const byServiceId = await call(suite.adminA.token, 'GET', `/entities/${serviceId}`);
    expect(byId).toMatchObject({ status: 200, body: created });
    expect(byServiceId).toMatchObject({ status: 200, body: created });
  });

  test('derives the service_id from the name when absent', async () => {
    const name = `Checkout API ${suite.run}`;
    const created = await createEntity({ name, type: 'api' });
    expect(created.service_id).toBe(`checkout-api-${suite.run}`);
  });

  test('a duplicate service_id is a 409', async () => {
    const serviceId = uniqueId('dup');
    await createEntity({ service_id: serviceId, name: 'First' });
    const res = await call(suite.adminA.token, 'POST', '/entities', {
      service_id: serviceId,
      name: 'Second',
      type: 'tool',
    });
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
  });

  test('unknown enumerated values are a 400 with a detail per field', async () => {
    const res = await call(suite.adminA.token, 'POST', '/entities', {
      name: 'Bad',
      type: 'spaceship',
      lifecycle: 'immortal',
      tier: 'tier9',
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.type', 'body.lifecycle', 'body.tier']));
  });

  test('a relation to an unknown entity is a 400 naming the target', async () => {
    const res = await call(suite.adminA.token, 'POST', '/entities', {
      name: uniqueId('orphan'),
      type: 'service',
      relations: [{ type: 'depends_on', target: 'no-such-entity' }],
    });
    expect(res).toMatchObject({
      status: 400,
      body: {
        error: { details: [{ field: 'body.relations[0].target', message: expect.stringContaining('no-such-entity') }] },
      },
    });
  });

  test('a service_id that looks like a uuid is refused', async () => {
    const res = await call(suite.adminA.token, 'POST', '/entities', {
      service_id: '0e5c3f0a-1b2c-4d5e-8f90-123456789abc',
      name: 'Looks like an id',
      type: 'service',
    });
    expect(res).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.service_id' }] } } });
  });
});

describe('PUT /entities/{id}', () => {
  test('changes the given fields, clears with null and logs one changelog entry per changed field with the actor', async () => {
    const entity = await createEntity({ name: uniqueId('ledger'), owner: 'team-a', lifecycle: 'development' });
    const res = await call(suite.adminA.token, 'PUT', `/entities/${entity.service_id}`, {
      lifecycle: 'production',
      owner: null,
      tags: ['critical'],
      description: entity.description ?? null,
    });
    expect(res).toMatchObject({ status: 200, body: { lifecycle: 'production', owner: null, tags: ['critical'] } });
    const log = await call(suite.adminA.token, 'GET', `/entities/${entity.id}/changelog`);
    const updates = log.body.entries.filter((e: { action: string }) => e.action === 'updated');
    expect(updates).toHaveLength(3);
    expect(updates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'lifecycle',
          old_value: 'development',
          new_value: 'production',
          actor: 'admin@a.test',
        }),
        expect.objectContaining({ field: 'owner', old_value: 'team-a', new_value: null }),
        expect.objectContaining({ field: 'tags', old_value: '[]', new_value: '["critical"]' }),
      ]),
    );
  });

  test('an unknown field is a 400 naming it', async () => {
    const entity = await createEntity({ name: uniqueId('strict') });
    const res = await call(suite.adminA.token, 'PUT', `/entities/${entity.id}`, { type: 'library', links: [] });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'body.type', message: 'is not an allowed field' },
        { field: 'body.links', message: 'is not an allowed field' },
      ]),
    );
  });

  test('an unknown entity is a 404', async () => {
    const res = await call(suite.adminA.token, 'PUT', '/entities/never-created', { name: 'x' });
    expect(res).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
  });
});

describe('DELETE /entities/{id}', () => {
  test('deletes the entity and its relations; a second DELETE is a 404', async () => {
    const target = await createEntity({ name: uniqueId('db') });
    const source = await createEntity({
      name: uniqueId('app'),
      relations: [{ type: 'depends_on', target: target.service_id }],
    });
    expect((await call(suite.adminA.token, 'DELETE', `/entities/${target.id}`)).status).toBe(204);
    expect((await call(suite.adminA.token, 'DELETE', `/entities/${target.id}`)).status).toBe(404);
    expect((await call(suite.adminA.token, 'GET', `/entities/${target.id}`)).status).toBe(404);
    const relations = await call(suite.adminA.token, 'GET', `/entities/${source.id}/relations`);
    expect(relations).toMatchObject({ status: 200, body: { relations: [] } });
  });
});
