import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import type { CrawlResult } from '../../search/crawl';
import { CRAWL_TICK_SCHEDULE_ID } from '../../search/crawl';
import { startCrawl } from '../../search/crawlControl';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { callApi, sessionToken, startApi, startWorkers, testDeps, type TestWorkers } from '../support/harness';
import { until } from '../support/processes';
import { useSearchIndex } from '../support/searchIndex';
import { FAKES_HOST } from '../support/testEnv';

// The documentation crawler against a local fake of the source host, with the real search
// worker, engine and database: repositories listed, READMEs and docs/ indexed by content hash,
// POST /admin/recrawl step by step, the fallback schedule, and the tenant boundary on each.

const { suite, call, uniqueId, createEntity } = useCatalogSuite();
const { drainAll } = useSearchIndex();
let host: FakeSourceHost;
let workers: TestWorkers;
let operator: string;

beforeAll(async () => {
  // Made before any admin's request: until the platform tenant exists, the API keeps "no
  // operator tenant" for a minute (Authenticator.isOperator), and a fresh database has none.
  operator = (
    await sessionToken({
      tenant: suite.api.deps.config.platformTenant,
      email: `ops-${suite.run}@platform.test`,
      roles: ['admin'],
    })
  ).token;
  host = await startFakeSourceHost();
  // Tenant A's account: two repositories with docs, a fork and an archived one.
  host.repositories.add('acme/payments');
  host.repositories.add('acme/ledger');
  host.repositories.add('acme/old-fork');
  host.repositories.add('acme/attic');
  host.details.set('acme/payments', { description: 'Takes the money', language: 'TypeScript', topics: ['billing'] });
  host.details.set('acme/ledger', { description: 'Double-entry books', language: 'Go', topics: ['billing', 'core'] });
  host.details.set('acme/old-fork', { fork: true });
  host.details.set('acme/attic', { archived: true, private: true });
  host.files.set(
    'acme/payments',
    new Map([
      ['README.md', '# Payments\n\nCharges cards through the quetzal gateway.\n'],
      ['docs/runbook.md', '# Runbook\n\nRestart the settlement worker when refunds pile up.\n'],
      ['docs/guides/setup.md', '## Setup\n\nInstall the toolchain.\n'],
      ['docs/diagram.png', 'not markdown'],
    ]),
  );
  host.files.set('acme/ledger', new Map([['README.md', '# Ledger\n\nBalances every journal.\n']]));
  const res = await call(suite.adminA.token, 'POST', '/integrations', {
    name: 'source host',
    type: 'vcs-host-a',
    config: { base_url: host.url, token: host.token },
  });
  expect(res.status).toBe(201);
  workers = await startWorkers(['search']);
});
afterAll(async () => {
  await workers?.stop();
  await host?.close();
});

async function refresh(): Promise<void> {
  await suite.api.deps.search.client.indices.refresh({ index: `${suite.api.deps.config.elasticsearch.indexPrefix}_*` });
}

/** A crawl of the tenant's due repositories, started directly, and its counts. */
async function crawlNow(tenantId: string): Promise<CrawlResult> {
  const operationId = `crawl-test-${randomUUID()}`;
  await startCrawl(suite.api.deps.temporal, tenantId, operationId);
  const result = await suite.api.deps.temporal.workflow.getHandle(operationId).result();
  await refresh();
  return result;
}

/** Starts a recrawl of tenant A and waits for its crawl's counts. */
async function recrawl(body?: unknown): Promise<{ accepted: Record<string, unknown>; result: CrawlResult }> {
  const res = await call(suite.adminA.token, 'POST', '/admin/recrawl', body);
  expect(res.status).toBe(202);
  const result = await suite.api.deps.temporal.workflow.getHandle(res.body.operation_id).result();
  await refresh();
  return { accepted: res.body, result };
}

describe('the crawl', () => {
  let first: CrawlResult;
  beforeAll(async () => {
    first = (await recrawl()).result;
    await drainAll(); // repositories reach /search through the outbox
  }, 60_000);

  test('lists the repositories the integration sees; /repositories filters, sorts and pages them (shape B)', async () => {
    expect(first).toMatchObject({ repositories: 4, crawled: 4, failed: 0, indexed: 4 });
    const listed = await call(suite.adminA.token, 'GET', '/repositories');
    expect(listed.status).toBe(200);
    // Forks and archived repositories only when asked for; private ones by default.
    expect(listed.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual([
      'acme/ledger',
      'acme/payments',
    ]);
    expect(listed.body.repositories[1]).toMatchObject({
      provider: 'vcs-host-a',
      owner: 'acme',
      name: 'payments',
      description: 'Takes the money',
      language: 'TypeScript',
      topics: ['billing'],
      fork: false,
      crawl_status: 'crawled',
      last_crawled_at: expect.any(String),
    });
    expect(listed.body.pagination).toEqual({
      page: 1,
      pageSize: 20,
      totalPages: 1,
      totalItems: 2,
      hasNext: false,
      hasPrevious: false,
    });
    const everything = await call(
      suite.adminA.token,
      'GET',
      '/repositories?show_forks=true&show_archived=true&show_private=false&sort=full_name&order=desc&page_size=2&page=1',
    );
    expect(everything.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual([
      'acme/payments',
      'acme/old-fork',
    ]);
    expect(everything.body.pagination).toMatchObject({ totalItems: 3, totalPages: 2, hasNext: true });
    const byTopic = await call(suite.adminA.token, 'GET', '/repositories?topic=core&language=go&search=DOUBLE');
    expect(byTopic.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual(['acme/ledger']);
    for (const bad of ['page=0', 'page_size=101', 'sort=stars', 'order=up', 'provider=elsewhere', 'colour=red']) {
      expect((await call(suite.adminA.token, 'GET', `/repositories?${bad}`)).status).toBe(400);
    }
  });

  test('indexes READMEs and Markdown under docs/ (nothing else); /docs lists them and /docs/{id} serves the content', async () => {
    const docs = await call(suite.adminA.token, 'GET', '/docs?repository=acme/payments');
    expect(docs.status).toBe(200);
    expect(docs.body.docs.map((d: { path: string; title: string }) => [d.path, d.title])).toEqual([
      ['README.md', 'Payments'],
      ['docs/guides/setup.md', 'Setup'],
      ['docs/runbook.md', 'Runbook'],
    ]);
    const runbook = docs.body.docs[2];
    const read = await call(suite.adminA.token, 'GET', `/docs/${runbook.id}`);
    expect(read.body).toMatchObject({
      repository: 'acme/payments',
      path: 'docs/runbook.md',
      format: 'markdown',
      content: '# Runbook\n\nRestart the settlement worker when refunds pile up.\n',
    });
    expect((await call(suite.adminA.token, 'GET', `/docs/${randomUUID()}`)).status).toBe(404);
    expect((await call(suite.adminA.token, 'GET', '/docs')).body.page.total).toBe(4);
  });

  test('/search finds documentation by its text and repositories by their description', async () => {
    const found = await call(suite.adminA.token, 'GET', '/search?q=settlement');
    expect(found.body.results).toEqual([
      expect.objectContaining({ collection: 'docs', key: 'acme/payments/docs/runbook.md', title: 'Runbook' }),
    ]);
    expect(found.body.results[0].snippet).toContain('<mark>settlement</mark>');
    const repos = await call(suite.adminA.token, 'GET', '/search?q=double-entry');
    expect(repos.body.sections.map((s: { collection: string }) => s.collection)).toContain('repositories');
  });

  test("an entity linking to a repository gets the repository's README and docs", async () => {
    const entity = await createEntity({
      name: uniqueId('Payments'),
      links: [{ title: 'code', url: `${host.url}/acme/payments` }],
    });
    const readme = await call(suite.adminA.token, 'GET', `/entities/${entity.id}/readme`);
    expect(readme).toMatchObject({
      status: 200,
      body: { format: 'markdown', content: expect.stringContaining('quetzal') },
    });
    const docs = await call(suite.adminA.token, 'GET', `/entities/${entity.id}/docs`);
    expect(docs.body.docs.map((d: { path: string }) => d.path)).toEqual([
      'README.md',
      'docs/guides/setup.md',
      'docs/runbook.md',
    ]);
    const unlinked = await createEntity({ name: uniqueId('Loner') });
    expect((await call(suite.adminA.token, 'GET', `/entities/${unlinked.id}/readme`)).status).toBe(404);
    expect((await call(suite.adminA.token, 'GET', `/entities/${unlinked.id}/docs`)).body).toEqual({ docs: [] });
    // Another tenant's entity is no entity at all.
    expect((await call(suite.adminB.token, 'GET', `/entities/${entity.id}/docs`)).status).toBe(404);
    expect((await call(suite.adminB.token, 'GET', `/entities/${entity.id}/readme`)).status).toBe(404);
  });

  test('a crawl writes only what changed: unchanged hashes are skipped, edits rewritten, deleted files removed', async () => {
    const unchanged = await recrawlWithoutReset();
    expect(unchanged).toMatchObject({ repositories: 4, indexed: 0, unchanged: 4, removed: 0 });

    host.files.get('acme/payments')!.set('docs/runbook.md', '# Runbook\n\nPage the on-call ledgerkeeper.\n');
    host.files.get('acme/payments')!.delete('docs/guides/setup.md');
    const edited = await recrawlWithoutReset();
    expect(edited).toMatchObject({ indexed: 1, unchanged: 2, removed: 1 });
    expect((await call(suite.adminA.token, 'GET', '/search?q=ledgerkeeper')).body.total).toBe(1);
    expect((await call(suite.adminA.token, 'GET', '/docs?repository=acme/payments')).body.page.total).toBe(2);
  });

  /** A crawl as the schedule runs one: the repositories have come due, their documents are still indexed. */
  async function recrawlWithoutReset(): Promise<CrawlResult> {
    await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
      trx('repositories').update({ next_crawl_at: trx.fn.now() }),
    );
    return crawlNow(suite.adminA.tenantId);
  }
});

describe('POST /admin/recrawl', () => {
  test('resets the tenant: documents flipped to not indexed (0 on an immediate second call), repositories due', async () => {
    await recrawl(); // everything indexed again
    const reset = await call(suite.adminA.token, 'POST', '/admin/recrawl');
    expect(reset.body).toMatchObject({
      message: 'Recrawl started',
      scope: 'tenant',
      reset_documents: 3,
      reset_repositories: 4,
      operation_id: expect.stringMatching(/^search-crawl-/),
    });
    expect(reset.body).not.toHaveProperty('repositories');
    expect(reset.body).not.toHaveProperty('trigger_error');
    const again = await call(suite.adminA.token, 'POST', '/admin/recrawl');
    expect(again.body).toMatchObject({ reset_documents: 0, reset_repositories: 4 });
    for (const started of [reset, again]) {
      await suite.api.deps.temporal.workflow.getHandle(started.body.operation_id).result();
    }
  }, 60_000);

  test('a filtered recrawl resets only the named repositories and echoes them', async () => {
    await recrawl();
    const { accepted, result } = await recrawl({ repositories: ['acme/ledger', 'acme/unknown'] });
    expect(accepted).toMatchObject({
      scope: 'filtered',
      repositories: ['acme/ledger', 'acme/unknown'],
      reset_documents: 1,
      reset_repositories: 1,
    });
    expect(result).toMatchObject({ repositories: 1, indexed: 1 });
  }, 60_000);

  test('refuses bad bodies with 400: names, their count and length, unknown fields, over 64 KiB', async () => {
    const long = `${'a'.repeat(200)}/${'b'.repeat(60)}`;
    const bodies = [
      { repositories: ['no-slash'] },
      { repositories: ['a/b/c'] },
      { repositories: ['acme/pay ments'] },
      { repositories: [long] },
      { repositories: [42] },
      { repositories: 'acme/payments' },
      { repositories: Array.from({ length: 501 }, (_, i) => `acme/r${i}`) },
      { scope: 'tenant' },
    ];
    for (const body of bodies) {
      const res = await call(suite.adminA.token, 'POST', '/admin/recrawl', body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'INVALID_REQUEST',
      });
    }
    // Under 500 names but over 64 KiB once padded with spaces (valid JSON, the raw size counts).
    const padded = `{"repositories": ["acme/payments"]${' '.repeat(66 * 1024)}}`;
    const res = await fetch(`${suite.api.url}/api/v1/admin/recrawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.adminA.token}`, 'content-type': 'application/json' },
      body: padded,
    });
    expect(res.status).toBe(400);
  });

  test('requires admin:write: a viewer gets 403, and resets nothing', async () => {
    const viewer = await sessionToken({ tenant: `catalog-a-${suite.run}`, email: 'viewer@a.test', roles: ['viewer'] });
    expect((await call(viewer.token, 'POST', '/admin/recrawl')).status).toBe(403);
  });

  test('when the crawl cannot be started: still 202 with trigger_error, and the reset stands', async () => {
    await recrawl();
    const deps = await testDeps();
    // A client of a namespace that does not exist: the start fails like an unreachable crawler.
    const api = await startApi({
      deps: {
        ...deps,
        temporal: new Client({ connection: deps.temporal.connection, namespace: `missing-${suite.run}` }),
      },
    });
    try {
      const res = await callApi(api, suite.adminA.token, 'POST', '/admin/recrawl', { repositories: ['acme/payments'] });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        reset_documents: 2,
        reset_repositories: 1,
        trigger_error: expect.any(String),
        operation_id: expect.stringMatching(/^search-crawl-/),
      });
      expect(res.body.message).not.toBe('Recrawl started');
    } finally {
      await api.close();
    }
    // The reset stands: the next crawl (the tick's) rewrites those documents.
    expect(await crawlNow(suite.adminA.tenantId)).toMatchObject({ repositories: 1, indexed: 2 });
  }, 60_000);

  test("resets only the caller's tenant: another tenant naming A's repositories resets nothing and sees nothing", async () => {
    const res = await call(suite.adminB.token, 'POST', '/admin/recrawl', { repositories: ['acme/payments'] });
    expect(res.body).toMatchObject({ reset_documents: 0, reset_repositories: 0 });
    await suite.api.deps.temporal.workflow.getHandle(res.body.operation_id).result();
    const docsA = await call(suite.adminA.token, 'GET', '/docs');
    expect(docsA.body.page.total).toBeGreaterThan(0);
    expect((await call(suite.adminB.token, 'GET', '/docs')).body.page.total).toBe(0);
    expect((await call(suite.adminB.token, 'GET', `/docs/${docsA.body.docs[0].id}`)).status).toBe(404);
    expect(
      (await call(suite.adminB.token, 'GET', '/repositories?show_forks=true&show_archived=true')).body.repositories,
    ).toEqual([]);
    expect((await call(suite.adminB.token, 'GET', '/search?q=settlement')).body.total).toBe(0);
  }, 60_000);

  test('one recrawl per tenant at a time: a second call while it runs answers 202 with the running operation_id', async () => {
    // A source host that accepts and never answers: the tenant's crawl runs until it is ended here.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, FAKES_HOST, resolve));
    const admin = await sessionToken({
      tenant: `recrawl-once-${suite.run}`,
      email: 'admin@once.test',
      roles: ['admin'],
    });
    const integration = await call(admin.token, 'POST', '/integrations', {
      name: 'silent host',
      type: 'vcs-host-a',
      config: { base_url: `http://${FAKES_HOST}:${(silent.address() as AddressInfo).port}`, token: 'silent' },
    });
    expect(integration.status).toBe(201);
    const first = await call(admin.token, 'POST', '/admin/recrawl');
    try {
      const second = await call(admin.token, 'POST', '/admin/recrawl');
      expect(first).toMatchObject({ status: 202, body: { message: 'Recrawl started' } });
      expect(first.body).not.toHaveProperty('already_running');
      expect(second).toMatchObject({
        status: 202,
        body: { operation_id: first.body.operation_id, already_running: true },
      });
      // Another tenant's recrawl is its own operation.
      const other = await call(suite.adminB.token, 'POST', '/admin/recrawl');
      expect(other.body.operation_id).not.toBe(first.body.operation_id);
      await suite.api.deps.temporal.workflow.getHandle(other.body.operation_id).result();
    } finally {
      await suite.api.deps.temporal.workflow.getHandle(first.body.operation_id).terminate('test over');
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 60_000);
});

describe('when the source host fails', () => {
  test("a repository's crawl is recorded as failed with the reason, and retried later", async () => {
    await recrawl();
    host.outages = 100; // every request answers 502 for a while
    try {
      const { result } = await recrawl({ repositories: ['acme/ledger'] });
      expect(result).toMatchObject({ failed: 1, crawled: 0, sync_error: expect.any(String) });
    } finally {
      host.outages = 0;
    }
    const listed = await call(suite.adminA.token, 'GET', '/repositories?search=ledger');
    expect(listed.body.repositories[0]).toMatchObject({
      crawl_status: 'failed',
      crawl_error: expect.stringContaining('502'),
    });
    // Nothing already indexed was lost.
    expect((await call(suite.adminA.token, 'GET', '/docs?repository=acme/ledger')).body.page.total).toBe(1);
  }, 60_000);
});

test('the fallback tick is an hourly Temporal schedule that crawls every due repository', async () => {
  const schedule = suite.api.deps.temporal.schedule.getHandle(CRAWL_TICK_SCHEDULE_ID);
  const described = await schedule.describe();
  expect(described.spec.intervals?.map((interval) => interval.every)).toEqual([3_600_000]);
  expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'crawlTick' });

  await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
    trx('repositories').update({ next_crawl_at: trx.fn.now(), crawl_status: 'pending' }),
  );
  await schedule.trigger();
  await until('the tick crawled tenant A', 60, async () => {
    const listed = await call(suite.adminA.token, 'GET', '/repositories?show_forks=true&show_archived=true');
    return listed.body.repositories.every((r: { crawl_status: string }) => r.crawl_status === 'crawled') || undefined;
  });
}, 90_000);

test('the recovery drill: every index deleted, then backfill and recrawl, and every search answers as before', async () => {
  const entity = await createEntity({ name: uniqueId('Quokka'), description: 'Settles the quokka ledgers' });
  await drainAll();
  const reads = ['/search?q=settlement', '/search?q=double-entry', '/search?q=quokka', '/docs', '/repositories'];
  const answers = async () =>
    Promise.all(
      reads.map(async (path) => {
        const { body } = await call(suite.adminA.token, 'GET', path);
        // Scores follow the engine's statistics of every tenant's documents: compare what was found.
        const found = (body.results ?? body.docs ?? body.repositories) as { id: string }[];
        return {
          path,
          total: body.total ?? body.page?.total ?? body.pagination.totalItems,
          found: found.map((f) => f.id).sort(),
        };
      }),
    );
  const before = await answers();
  expect(before.find((answer) => answer.path === '/search?q=quokka')!.found).toContain(entity.id);

  const prefix = suite.api.deps.config.elasticsearch.indexPrefix;
  await suite.api.deps.search.client.indices.delete({ index: `${prefix}_*` });
  expect((await call(suite.adminA.token, 'GET', '/search?q=quokka')).body.total).toBe(0);

  // The runbook: backfill first, then recrawl.
  await until('no other backfill runs', 60, async () =>
    (await call(operator, 'GET', '/admin/backfill/status')).body.status === 'running' ? undefined : true,
  );
  expect((await call(operator, 'POST', '/admin/backfill')).status).toBe(202);
  await until('the backfill completed', 120, async () => {
    const status = (await call(operator, 'GET', '/admin/backfill/status')).body;
    if (status.status === 'failed') throw new Error(status.error);
    return status.status === 'completed' || undefined;
  });
  await recrawl();
  expect(await answers()).toEqual(before);
}, 240_000);
