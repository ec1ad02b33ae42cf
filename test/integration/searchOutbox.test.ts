import pino from 'pino';
import { ChangeListener } from '../../db/notifications';
import { createSearchEngine, type SearchEngine } from '../../search/client';
import { aliasOf } from '../../search/indices';
import type { RefusedDocument } from '../../search/bulk';
import { drainOutboxBatch, OutboxDrain } from '../../search/outbox';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';
import { useSearchIndex } from '../support/searchIndex';
import { sessionToken, testConfig } from '../support/harness';
import { until } from '../support/processes';

// The search outbox on the real engine: every write adds a row in its own transaction, the
// drain indexes the rows' current state and deletes them once the engine acknowledged them, and
// an engine outage fails no write and loses none.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();
const { index, drainAll, indexed } = useSearchIndex();
const config = testConfig();
/** An engine nobody listens on: what the drain sees during an outage. */
let downEngine: SearchEngine;

beforeAll(() => {
  downEngine = createSearchEngine(config, { url: 'http://127.0.0.1:1' });
});

afterAll(() => downEngine.client.close());

const status = async (token: string) => (await call(token, 'GET', '/indexing/status')).body;

describe('/indexing/status', () => {
  test("a tenant sees its own backlog only; a platform operator also sees every tenant's together", async () => {
    const operator = await sessionToken({
      tenant: suite.api.deps.config.platformTenant,
      email: `ops-${suite.run}@platform.test`,
      roles: ['admin'],
    });
    // Each caller's first request records its user (a searchable write): made before the drain.
    for (const token of [suite.adminA.token, suite.adminB.token, operator.token]) await status(token);
    await drainAll();
    for (let i = 0; i < 3; i++) await createEntity({ name: uniqueId('Backlog') }, suite.adminB.token);

    const own = await status(suite.adminA.token);
    expect(own).toEqual({ status: 'current', queue_size: 0, oldest_pending_seconds: null });
    const ofB = await status(suite.adminB.token);
    expect(ofB).toMatchObject({ status: 'indexing', queue_size: 3 });
    expect(ofB).not.toHaveProperty('platform');

    const asOperator = await status(operator.token);
    expect(asOperator.platform).toMatchObject({ status: 'indexing' });
    expect(asOperator.platform.queue_size).toBeGreaterThanOrEqual(3);
    expect(asOperator.platform.oldest_pending_seconds).toBeGreaterThanOrEqual(0);
    await drainAll();
  });
});

describe('the search outbox', () => {
  test("a created entity waits in its tenant's backlog, then is indexed with its tenant", async () => {
    // The drain is not running: what the write left is exactly what the status counts.
    const before = await status(suite.adminA.token);
    const otherTenant = await status(suite.adminB.token);
    const entity = await createEntity({ name: uniqueId('Ledger'), description: 'Double-entry ledger', tags: ['pci'] });
    const pending = await status(suite.adminA.token);
    expect(pending).toMatchObject({ status: 'indexing', queue_size: before.queue_size + 1 });
    expect(pending.oldest_pending_seconds).toBeGreaterThanOrEqual(0);
    expect((await status(suite.adminB.token)).queue_size).toBe(otherTenant.queue_size);

    await drainAll();
    expect(await indexed('entities', entity.id)).toMatchObject({
      tenant_id: suite.adminA.tenantId,
      collection: 'entities',
      key: entity.service_id,
      title: entity.name,
      description: 'Double-entry ledger',
      type: 'service',
      tags: ['pci'],
    });
    expect(await status(suite.adminA.token)).toEqual({
      status: 'current',
      queue_size: 0,
      oldest_pending_seconds: null,
    });
  });

  test('several writes to one document land as its last state; a delete removes it', async () => {
    const entity = await createEntity({ name: uniqueId('Billing') });
    for (const description of ['first', 'second', 'last']) {
      expect((await call(suite.adminA.token, 'PUT', `/entities/${entity.id}`, { description })).status).toBe(200);
    }
    await drainAll();
    expect(await indexed('entities', entity.id)).toMatchObject({ description: 'last' });

    expect((await call(suite.adminA.token, 'DELETE', `/entities/${entity.id}`)).status).toBe(204);
    await drainAll();
    expect(await indexed('entities', entity.id)).toBeUndefined();
  });

  test('teams and molds are indexed from the same outbox', async () => {
    const team = await call(suite.adminA.token, 'POST', '/admin/teams', { name: uniqueId('Platform Team') });
    expect(team.status).toBe(201);
    const slug = uniqueId('restart');
    const mold = await call(suite.adminA.token, 'POST', '/forge/molds', {
      slug,
      name: slug,
      entity_types: ['service'],
    });
    expect(mold.status).toBe(201);
    await drainAll();
    expect(await indexed('teams', team.body.id)).toMatchObject({ title: team.body.name, key: team.body.slug });
    expect(await indexed('molds', mold.body.id)).toMatchObject({ title: mold.body.name, tags: ['service'] });
  });

  test('while the engine is down every write succeeds and waits; all of them appear once it is back', async () => {
    await drainAll();
    const entities = [];
    for (let i = 0; i < 3; i++) entities.push(await createEntity({ name: uniqueId('Outage') }));
    await expect(drainOutboxBatch(index.system, downEngine, 500)).rejects.toThrow();
    expect(await status(suite.adminA.token)).toMatchObject({ status: 'indexing', queue_size: 3 });

    // A minute of outage later, the status says so.
    await index
      .system('search_outbox')
      .where({ tenant_id: suite.adminA.tenantId })
      .update({ created_at: index.system.raw("now() - interval '2 minutes'") });
    expect(await status(suite.adminA.token)).toMatchObject({ status: 'stalled', queue_size: 3 });

    await drainAll();
    for (const entity of entities) expect(await indexed('entities', entity.id)).toMatchObject({ title: entity.name });
    expect(await status(suite.adminA.token)).toMatchObject({ status: 'current', queue_size: 0 });
  });

  test('a document the engine refuses is reported and left out: it never holds back the writes behind it', async () => {
    const refusedEntity = await createEntity({ name: uniqueId('Immense') });
    await drainAll();
    // A hand-run UPDATE (the trigger sees every write path): a tag over the engine's 32 KiB term limit.
    await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
      trx('entities')
        .where({ id: refusedEntity.id })
        .update({ tags: ['x'.repeat(40_000)], description: 'refused' }),
    );
    const behind = await createEntity({ name: uniqueId('Behind') });
    const refused: RefusedDocument[] = [];
    while ((await drainOutboxBatch(index.system, index.engine, 500, (docs) => refused.push(...docs))) > 0);
    await index.engine.client.indices.refresh({ index: `${config.elasticsearch.indexPrefix}_*` });

    expect(refused.filter((doc) => doc.id === refusedEntity.id)).toEqual([
      { collection: 'entities', id: refusedEntity.id, reason: expect.stringContaining('tags') },
    ]);
    expect(await indexed('entities', behind.id)).toMatchObject({ title: behind.name });
    // The engine keeps the version it took last; the outbox is empty.
    expect(await indexed('entities', refusedEntity.id)).toMatchObject({ title: refusedEntity.name, description: null });
    expect(await status(suite.adminA.token)).toMatchObject({ status: 'current', queue_size: 0 });
    // Not left behind for the backfill suite, which expects the engine to take every row it reads.
    expect((await call(suite.adminA.token, 'DELETE', `/entities/${refusedEntity.id}`)).status).toBe(204);
    await drainAll();
  });

  test('control characters in a name (type-ahead separators to the engine) are left out of its type-ahead input', async () => {
    const serviceId = uniqueId('odd').toLowerCase();
    const entity = await createEntity({ name: `Odd\u001dName\u001f ${serviceId}`, service_id: serviceId });
    await drainAll();
    expect(await indexed('entities', entity.id)).toMatchObject({
      title: entity.name,
      suggest: { input: [`Odd Name  ${serviceId}`, serviceId] },
    });
  });

  test('one writer at a time: a drain leaves the outbox alone while another holds the writer lock', async () => {
    await createEntity({ name: uniqueId('Locked') });
    await index.system.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(7305114017)');
      expect(await drainOutboxBatch(index.system, index.engine, 500)).toBe(0);
    });
    expect((await status(suite.adminA.token)).queue_size).toBeGreaterThan(0);
    await drainAll();
  });
});

describe('the drain loop', () => {
  test('backs off while the engine is down, then drains on the next commit once it is back', async () => {
    const logger = pino({ level: 'silent' });
    const changes = new ChangeListener(config.database.appUrl, logger);
    await changes.start();
    const options = { batchSize: 500, pollMs: 60_000, maxBackoffMs: 200 };
    try {
      const failing = new OutboxDrain(index.system, downEngine, changes, logger, options);
      await failing.start();
      const waiting = await createEntity({ name: uniqueId('Backlog') });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await failing.stop();
      expect((await status(suite.adminA.token)).queue_size).toBeGreaterThan(0);

      // With a minute between polls, only the commit's notification can wake it in time.
      const working = new OutboxDrain(index.system, index.engine, changes, logger, options);
      await working.start();
      try {
        await until('the backlog drained', 30, async () =>
          (await status(suite.adminA.token)).queue_size === 0 ? true : undefined,
        );
        const woken = await createEntity({ name: uniqueId('Woken') });
        await until('the new entity indexed', 10, async () => {
          await index.engine.client.indices.refresh({ index: aliasOf(index.engine, 'entities') });
          return indexed('entities', woken.id);
        });
        expect(await indexed('entities', waiting.id)).toMatchObject({ title: waiting.name });
      } finally {
        await working.stop();
      }
    } finally {
      await changes.close();
    }
    // Its waits allow up to 40 s: the backlog may hold other suites' rows the drain also sends.
  }, 60_000);
});
