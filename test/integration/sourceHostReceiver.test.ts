import { createHmac, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { pushCrawlWorkflowId } from '../../search/crawl';
import { startCrawl } from '../../search/crawlControl';
import { withTenant } from '../../db/tenancy';
import { useCatalogSuite } from '../support/catalogSuite';
import { startFakeSourceHost, type FakeSourceHost } from '../support/fakeSourceHost';
import { startApi, startWorkers, testDeps, type TestApi, type TestWorkers } from '../support/harness';
import { until } from '../support/processes';
import { useSearchIndex } from '../support/searchIndex';

// POST /integrations/vcs-host-a/webhook with the real API, search worker, engine and database,
// against fakes of each tenant's source host: the signature check, delivery ids seen once, a
// push's crawl of one repository, repository events in /repositories and /search, and the
// tenant boundary (docs/source-host-receiver.md).

const { suite, call } = useCatalogSuite();
const { drainAll } = useSearchIndex();
const SECRET_A = `secret-a-${randomUUID()}`;
const SECRET_B = `secret-b-${randomUUID()}`;
let hostA: FakeSourceHost;
let hostB: FakeSourceHost;
let workers: TestWorkers;
/** Tenant A's and B's vcs-host-a integrations. */
let integrationA: string;
let integrationB: string;

async function createIntegration(token: string, config: Record<string, unknown>): Promise<string> {
  const res = await call(token, 'POST', '/integrations', { name: 'source host', type: 'vcs-host-a', config });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function refresh(): Promise<void> {
  await suite.api.deps.search.client.indices.refresh({ index: `${suite.api.deps.config.elasticsearch.indexPrefix}_*` });
}

/** A crawl of the tenant (every repository due), waited for. */
async function crawlTenant(tenantId: string): Promise<void> {
  const operationId = `receiver-test-crawl-${randomUUID()}`;
  await startCrawl(suite.api.deps.temporal, tenantId, operationId);
  await suite.api.deps.temporal.workflow.getHandle(operationId).result();
}

interface Delivery {
  /** The API to send to (default: the suite's). */
  api?: TestApi;
  integration?: string;
  secret?: string;
  /** The X-Hub-Signature-256 header as sent; default: the body signed with `secret`. */
  signature?: string | null;
  deliveryId?: string;
  /** The body as sent (default: the payload's JSON). */
  raw?: string;
}

/** Sends a delivery as the host does; its answer. */
async function deliver(event: string, payload: unknown, options: Delivery = {}) {
  const raw = options.raw ?? JSON.stringify(payload);
  const secret = options.secret ?? SECRET_A;
  const signature =
    options.signature === undefined
      ? `sha256=${createHmac('sha256', secret).update(raw, 'utf8').digest('hex')}`
      : options.signature;
  const res = await fetch(
    `${(options.api ?? suite.api).url}/api/v1/integrations/vcs-host-a/webhook?integration=${options.integration ?? integrationA}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-event': event,
        'x-hub-delivery': options.deliveryId ?? randomUUID(),
        'user-agent': 'vcs-host-a-Hookshot/fake',
        ...(signature !== null && { 'x-hub-signature-256': signature }),
      },
      body: raw,
    },
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A repository as the host's payloads show it. */
const hostRepository = (fullName: string, extra: Record<string, unknown> = {}) => {
  const [owner, name] = fullName.split('/');
  return {
    id: 1234,
    full_name: fullName,
    name,
    owner: { login: owner, id: 1, type: 'Organization' },
    description: null,
    language: 'TypeScript',
    topics: [],
    fork: false,
    archived: false,
    private: false,
    default_branch: 'main',
    html_url: `https://vcs-host-a.example/${fullName}`,
    ...extra,
  };
};

const pushOf = (
  fullName: string,
  files: { added?: string[]; modified?: string[]; removed?: string[] },
  ref = 'refs/heads/main',
) => ({
  ref,
  before: '0'.repeat(40),
  after: '1'.repeat(40),
  repository: hostRepository(fullName),
  commits: [{ id: '1'.repeat(40), message: 'change', added: [], removed: [], modified: [], ...files }],
  pusher: { name: 'someone' },
});

const repositoriesOf = async (token: string) =>
  (await call(token, 'GET', '/repositories?show_archived=true&show_forks=true')).body.repositories as {
    id: string;
    full_name: string;
    archived: boolean;
    description: string | null;
  }[];

const namesOf = async (token: string) => (await repositoriesOf(token)).map((repository) => repository.full_name);

/** The latest run of the tenant's push crawl. */
async function lastPushCrawl(tenantId: string): Promise<string> {
  return (await suite.api.deps.temporal.workflow.getHandle(pushCrawlWorkflowId(tenantId)).describe()).runId;
}

beforeAll(async () => {
  hostA = await startFakeSourceHost();
  hostB = await startFakeSourceHost();
  for (const name of ['acme/payments', 'acme/ledger', 'acme/shared']) hostA.repositories.add(name);
  hostA.files.set('acme/payments', new Map([['README.md', '# Payments\n\nCharges cards.\n']]));
  hostA.files.set('acme/ledger', new Map([['README.md', '# Ledger\n\nBalances every journal.\n']]));
  // Tenant B's host has a repository of the same name as one of A's.
  hostB.repositories.add('acme/shared');
  hostB.files.set('acme/shared', new Map([['README.md', '# Shared of B\n']]));
  integrationA = await createIntegration(suite.adminA.token, {
    base_url: hostA.url,
    token: hostA.token,
    webhook_secret: SECRET_A,
  });
  integrationB = await createIntegration(suite.adminB.token, {
    base_url: hostB.url,
    token: hostB.token,
    webhook_secret: SECRET_B,
  });
  workers = await startWorkers(['search']);
  await crawlTenant(suite.adminA.tenantId);
  await crawlTenant(suite.adminB.tenantId);
  await refresh();
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await hostA?.close();
  await hostB?.close();
});

describe('the signature', () => {
  const deleteLedger = { action: 'deleted', repository: hostRepository('acme/ledger') };

  test("a ping signed with the integration's webhook_secret is processed; the secret is never shown", async () => {
    expect(await deliver('ping', { zen: 'Design for failure.', hook_id: 1 })).toEqual({
      status: 200,
      body: { status: 'processed', event: 'ping' },
    });
    const integration = await call(suite.adminA.token, 'GET', `/integrations/${integrationA}`);
    expect(integration.body.secrets).toContain('webhook_secret');
    expect(JSON.stringify(integration.body)).not.toContain(SECRET_A);
  });

  test("a wrong, missing or malformed signature, another tenant's secret, or an unknown integration: the same 401, nothing changed", async () => {
    const deliveryId = randomUUID();
    const refusals = [
      await deliver('repository', deleteLedger, { deliveryId, secret: 'not-the-secret-at-all' }),
      await deliver('repository', deleteLedger, { deliveryId, signature: null }),
      await deliver('repository', deleteLedger, { deliveryId, signature: '' }),
      await deliver('repository', deleteLedger, { deliveryId, signature: 'sha256=abc' }),
      await deliver('repository', deleteLedger, { deliveryId, secret: SECRET_B }),
      // Signed over other bytes than those sent.
      await deliver('repository', deleteLedger, {
        deliveryId,
        raw: `${JSON.stringify(deleteLedger)} `,
        signature: `sha256=${createHmac('sha256', SECRET_A).update(JSON.stringify(deleteLedger)).digest('hex')}`,
      }),
      await deliver('repository', deleteLedger, { deliveryId, integration: randomUUID() }),
    ];
    for (const refused of refusals) {
      expect(refused).toEqual({
        status: 401,
        body: { error: expect.objectContaining({ code: 'UNAUTHORIZED', message: 'Authentication required' }) },
      });
    }
    expect(await namesOf(suite.adminA.token)).toContain('acme/ledger');
    // The refused deliveries left no trace: the same id, signed, is processed (not a duplicate).
    const signedUnknownAction = { action: 'anonymous_access_enabled', repository: hostRepository('acme/ledger') };
    expect((await deliver('repository', signedUnknownAction, { deliveryId })).body.status).toBe('ignored');
  });

  test('an integration that is inactive or has no webhook_secret answers the same 401', async () => {
    const bare = await createIntegration(suite.adminA.token, { base_url: hostA.url, token: hostA.token });
    expect((await deliver('ping', {}, { integration: bare })).status).toBe(401);
    expect((await call(suite.adminA.token, 'DELETE', `/integrations/${bare}`)).status).toBe(204);
    const inactive = await call(suite.adminA.token, 'PUT', `/integrations/${integrationA}`, { status: 'inactive' });
    expect(inactive.status).toBe(200);
    try {
      expect((await deliver('ping', {})).status).toBe(401);
    } finally {
      await call(suite.adminA.token, 'PUT', `/integrations/${integrationA}`, { status: 'active' });
    }
    expect((await deliver('ping', {})).status).toBe(200);
  });

  test('a signed delivery with a payload its event cannot use, or no delivery id, is a 400 and changes nothing', async () => {
    const deliveryId = randomUUID();
    const bad = [
      await deliver('push', { ref: 'refs/heads/main' }, { deliveryId }),
      await deliver(
        'repository',
        { action: 'deleted', repository: { full_name: 'no slash', name: 'x', owner: { login: 'a' } } },
        { deliveryId },
      ),
      await deliver('repository', { action: 'deleted' }, { deliveryId }),
    ];
    for (const refused of bad)
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'INVALID_REQUEST' } } });
    const raw = '{"action": "deleted", ';
    const malformed = await deliver('repository', undefined, { raw, deliveryId });
    expect(malformed.status).toBe(400);
    const noDeliveryId = await fetch(
      `${suite.api.url}/api/v1/integrations/vcs-host-a/webhook?integration=${integrationA}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-event': 'repository',
          'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET_A).update(JSON.stringify(deleteLedger)).digest('hex')}`,
        },
        body: JSON.stringify(deleteLedger),
      },
    );
    expect(noDeliveryId.status).toBe(400);
    expect(await namesOf(suite.adminA.token)).toContain('acme/ledger');
    expect((await deliver('ping', {}, { deliveryId })).body.status).toBe('processed');
  });

  test('a body over SHIPYARD_RECEIVER_BODY_LIMIT is a 413', async () => {
    const raw = JSON.stringify({ zen: 'x'.repeat(suite.api.deps.config.receiver.bodyLimitBytes) });
    expect((await deliver('ping', undefined, { raw })).status).toBe(413);
  });
});

describe('delivery ids', () => {
  test('a replayed delivery is answered duplicate and not processed again', async () => {
    const deliveryId = randomUUID();
    const archive = { action: 'archived', repository: hostRepository('acme/ledger', { archived: true }) };
    expect((await deliver('repository', archive, { deliveryId })).body).toMatchObject({ status: 'processed' });
    // The same id again, even with another (signed) payload: nothing is done.
    const unarchive = { action: 'unarchived', repository: hostRepository('acme/ledger', { archived: false }) };
    expect(await deliver('repository', unarchive, { deliveryId })).toEqual({
      status: 200,
      body: { status: 'duplicate', event: 'repository' },
    });
    expect((await repositoriesOf(suite.adminA.token)).find((r) => r.full_name === 'acme/ledger')?.archived).toBe(true);
    expect((await deliver('repository', unarchive)).body.status).toBe('processed');
    expect((await repositoriesOf(suite.adminA.token)).find((r) => r.full_name === 'acme/ledger')?.archived).toBe(false);
  });

  test('two copies arriving at once: one is processed, the other is a duplicate', async () => {
    const deliveryId = randomUUID();
    const edit = { action: 'edited', repository: hostRepository('acme/ledger', { description: 'Twice told' }) };
    const answers = await Promise.all(Array.from({ length: 4 }, () => deliver('repository', edit, { deliveryId })));
    expect(answers.map((answer) => answer.body.status).sort()).toEqual([
      'duplicate',
      'duplicate',
      'duplicate',
      'processed',
    ]);
  });

  test('delivery ids older than SHIPYARD_RECEIVER_DELIVERY_RETENTION_DAYS are pruned by the next delivery', async () => {
    const old = randomUUID();
    expect((await deliver('ping', {}, { deliveryId: old })).body.status).toBe('processed');
    const days = suite.api.deps.config.receiver.deliveryRetentionDays;
    const seen = () =>
      withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
        trx('source_host_deliveries').where({ delivery_id: old }).first('delivery_id'),
      );
    await withTenant(suite.api.deps.db, suite.adminA.tenantId, (trx) =>
      trx('source_host_deliveries')
        .where({ delivery_id: old })
        .update({ received_at: trx.raw('now() - make_interval(days => ?)', [days + 1]) }),
    );
    expect(await seen()).toBeDefined();
    expect((await deliver('ping', {})).body.status).toBe('processed');
    expect(await seen()).toBeUndefined();
  });

  test('unknown events are answered ignored', async () => {
    expect(await deliver('issues', { action: 'opened', issue: { number: 1 } })).toEqual({
      status: 200,
      body: { status: 'ignored', event: 'issues' },
    });
  });
});

describe('push', () => {
  test('a push changing README.md crawls that repository only, and its new text is searchable', async () => {
    hostA.files.get('acme/payments')!.set('README.md', '# Payments\n\nNow settles through the xylophone gateway.\n');
    hostA.requests.length = 0;
    const hostBRequests = hostB.requests.length;
    const res = await deliver('push', pushOf('acme/payments', { modified: ['README.md'] }));
    expect(res).toMatchObject({
      status: 200,
      body: { status: 'processed', crawl: 'started', repository_id: expect.any(String) },
    });
    expect(
      await suite.api.deps.temporal.workflow.getHandle(pushCrawlWorkflowId(suite.adminA.tenantId)).result(),
    ).toEqual({
      crawled: 1,
    });
    await refresh();
    const found = await call(suite.adminA.token, 'GET', '/search?q=xylophone');
    expect(found.body.results).toEqual([
      expect.objectContaining({ collection: 'docs', key: 'acme/payments/README.md' }),
    ]);
    // Only that repository was read from the host: no listing, nothing of the others.
    const paths = hostA.requests.map((request) => request.path);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((path) => path.startsWith('/repos/acme/payments/'))).toBe(true);
    expect(hostB.requests).toHaveLength(hostBRequests);
    // Tenant B's repositories and search are untouched.
    expect((await call(suite.adminB.token, 'GET', '/search?q=xylophone')).body.total).toBe(0);
  }, 60_000);

  test('pushes arriving while the crawl runs are not lost: the last text of each repository is indexed', async () => {
    const readme = (repository: string, word: string) =>
      hostA.files.get(repository)!.set('README.md', `# ${repository}\n\nNow about ${word}.\n`);
    readme('acme/payments', 'aardvark');
    const first = deliver('push', pushOf('acme/payments', { modified: ['README.md'] }));
    readme('acme/ledger', 'bandicoot');
    const other = deliver('push', pushOf('acme/ledger', { modified: ['README.md'] }));
    expect((await first).body.crawl).toBe('started');
    readme('acme/payments', 'capybara');
    const again = await deliver('push', pushOf('acme/payments', { modified: ['README.md'] }));
    expect([(await other).body.crawl, again.body.crawl]).toEqual(['started', 'started']);
    const searchable = async (word: string) => {
      await refresh();
      return (await call(suite.adminA.token, 'GET', `/search?q=${word}`)).body.total === 1 || undefined;
    };
    await until(
      'the later pushes are indexed',
      30,
      async () => (await searchable('capybara')) && searchable('bandicoot'),
    );
    expect((await call(suite.adminA.token, 'GET', '/search?q=aardvark')).body.total).toBe(0);
  }, 60_000);

  test('when the crawl cannot be started: still 200, crawl scheduled, and the repository is due for the tick', async () => {
    const deps = await testDeps();
    // A client of a namespace that does not exist: the start fails like an unreachable Temporal.
    const api = await startApi({
      deps: {
        ...deps,
        temporal: new Client({ connection: deps.temporal.connection, namespace: `missing-${suite.run}` }),
      },
    });
    try {
      const res = await deliver('push', pushOf('acme/ledger', { removed: ['docs/gone.md'] }), { api });
      expect(res).toMatchObject({ status: 200, body: { status: 'processed', crawl: 'scheduled' } });
    } finally {
      await api.close();
    }
    const ledger = (await call(suite.adminA.token, 'GET', '/repositories?search=ledger')).body.repositories[0];
    expect(ledger).toMatchObject({ full_name: 'acme/ledger', crawl_status: 'pending' });
    expect(Date.parse(ledger.next_crawl_at)).toBeLessThanOrEqual(Date.now());
  });

  test('a push changing no Markdown, or on another branch, crawls nothing', async () => {
    const runBefore = await lastPushCrawl(suite.adminA.tenantId);
    hostA.requests.length = 0;
    const code = await deliver(
      'push',
      pushOf('acme/payments', { modified: ['src/index.ts'], added: ['docs/diagram.png'] }),
    );
    expect(code).toEqual({ status: 200, body: { status: 'processed', event: 'push' } });
    const branch = await deliver('push', pushOf('acme/payments', { modified: ['README.md'] }, 'refs/heads/feature'));
    expect(branch).toEqual({ status: 200, body: { status: 'processed', event: 'push' } });
    expect(await lastPushCrawl(suite.adminA.tenantId)).toBe(runBefore);
    expect(hostA.requests).toEqual([]);
  });
});

describe('repository events', () => {
  test('created, renamed, archived and deleted reach /repositories and /search', async () => {
    hostA.repositories.add('acme/newborn');
    hostA.files.set('acme/newborn', new Map([['README.md', '# Newborn\n\nHatched by a quokka.\n']]));
    const created = await deliver('repository', {
      action: 'created',
      repository: hostRepository('acme/newborn', { description: 'Freshly hatched zebra' }),
    });
    expect(created.body).toMatchObject({ status: 'processed', crawl: 'started' });
    const repositoryId = created.body.repository_id;
    await suite.api.deps.temporal.workflow.getHandle(pushCrawlWorkflowId(suite.adminA.tenantId)).result();
    await drainAll();
    expect(await namesOf(suite.adminA.token)).toContain('acme/newborn');
    const zebra = await call(suite.adminA.token, 'GET', '/search?q=zebra');
    expect(zebra.body.results).toEqual([expect.objectContaining({ collection: 'repositories', key: 'acme/newborn' })]);
    expect((await call(suite.adminA.token, 'GET', '/search?q=quokka')).body.results).toEqual([
      expect.objectContaining({ collection: 'docs', key: 'acme/newborn/README.md' }),
    ]);

    // Renamed on the host: the same repository under its new name, its documents rewritten with it.
    hostA.repositories.delete('acme/newborn');
    hostA.repositories.add('acme/grownup');
    hostA.files.set('acme/grownup', hostA.files.get('acme/newborn')!);
    const renamed = await deliver('repository', {
      action: 'renamed',
      repository: hostRepository('acme/grownup', { description: 'Freshly hatched zebra' }),
      changes: { repository: { name: { from: 'newborn' } } },
    });
    expect(renamed.body).toMatchObject({ status: 'processed', repository_id: repositoryId, crawl: 'started' });
    await suite.api.deps.temporal.workflow.getHandle(pushCrawlWorkflowId(suite.adminA.tenantId)).result();
    await drainAll();
    const names = await namesOf(suite.adminA.token);
    expect(names).toContain('acme/grownup');
    expect(names).not.toContain('acme/newborn');
    expect((await call(suite.adminA.token, 'GET', '/search?q=zebra')).body.results).toEqual([
      expect.objectContaining({ collection: 'repositories', key: 'acme/grownup' }),
    ]);
    expect((await call(suite.adminA.token, 'GET', '/search?q=quokka')).body.results).toEqual([
      expect.objectContaining({ collection: 'docs', key: 'acme/grownup/README.md' }),
    ]);

    // Archived: hidden from the default list, shown archived when asked for.
    await deliver('repository', { action: 'archived', repository: hostRepository('acme/grownup', { archived: true }) });
    const listed = (await call(suite.adminA.token, 'GET', '/repositories')).body.repositories;
    expect(listed.map((r: { full_name: string }) => r.full_name)).not.toContain('acme/grownup');
    expect((await repositoriesOf(suite.adminA.token)).find((r) => r.full_name === 'acme/grownup')?.archived).toBe(true);

    // Deleted: gone from the list, from /search, and its documents with it.
    const deleted = await deliver('repository', { action: 'deleted', repository: hostRepository('acme/grownup') });
    expect(deleted.body).toEqual({ status: 'processed', event: 'repository' });
    await drainAll();
    expect(await namesOf(suite.adminA.token)).not.toContain('acme/grownup');
    expect((await call(suite.adminA.token, 'GET', '/search?q=zebra')).body.total).toBe(0);
    expect((await call(suite.adminA.token, 'GET', '/search?q=quokka')).body.total).toBe(0);
    expect((await call(suite.adminA.token, 'GET', '/docs?repository=acme/grownup')).body.page.total).toBe(0);
  }, 90_000);
});

describe('tenant isolation', () => {
  test("a delivery signed for tenant A's integration changes A's repository of a name, never B's of the same name", async () => {
    const deleted = await deliver('repository', { action: 'deleted', repository: hostRepository('acme/shared') });
    expect(deleted.body.status).toBe('processed');
    expect(await namesOf(suite.adminA.token)).not.toContain('acme/shared');
    expect(await namesOf(suite.adminB.token)).toEqual(['acme/shared']);
    expect((await call(suite.adminB.token, 'GET', '/docs?repository=acme/shared')).body.page.total).toBe(1);
  });

  test("B's integration id with A's secret, or A's with B's, is refused: nothing of B changes", async () => {
    const deleteShared = { action: 'deleted', repository: hostRepository('acme/shared') };
    expect((await deliver('repository', deleteShared, { integration: integrationB, secret: SECRET_A })).status).toBe(
      401,
    );
    expect((await deliver('repository', deleteShared, { integration: integrationA, secret: SECRET_B })).status).toBe(
      401,
    );
    expect(await namesOf(suite.adminB.token)).toEqual(['acme/shared']);
    // B's own signed delivery works on B alone.
    const edited = await deliver(
      'repository',
      { action: 'edited', repository: hostRepository('acme/shared', { description: 'B edits its own' }) },
      { integration: integrationB, secret: SECRET_B },
    );
    expect(edited.body.status).toBe('processed');
    expect((await repositoriesOf(suite.adminB.token))[0].description).toBe('B edits its own');
    const tenantB = await withTenant(suite.api.deps.db, suite.adminB.tenantId, (trx) =>
      trx('source_host_deliveries').count<{ count: string }[]>('* as count'),
    );
    expect(Number(tenantB[0].count)).toBe(1);
  });
});
