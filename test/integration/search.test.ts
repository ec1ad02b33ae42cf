import { randomBytes } from 'node:crypto';
import { useCatalogSuite } from '../support/catalogSuite';
import { callApi, sessionToken, startApi, testConfig, testDeps } from '../support/harness';
import { useSearchIndex } from '../support/searchIndex';

// GET /search and /catalog/search-entities on the real engine, fed by the outbox: tenant
// filtering of every search path, matching (prefix, typo), filters, facets, paging, snippets,
// validation, and an engine outage.

const { suite, call, createEntity } = useCatalogSuite();
const { drainAll } = useSearchIndex();

/**
 * A word no other document has: the tests' documents are found by it alone. Letters only, so a
 * test can add digits that alone tell two names apart.
 */
const word = () => `zq${[...randomBytes(8)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('')}`;

const search = async (query: string, token = suite.adminA.token) => call(token, 'GET', `/search?${query}`);

describe('tenant filtering', () => {
  test("another tenant writing the same word changes nothing in a tenant's /search answer (but the engine's time)", async () => {
    const shared = word();
    await createEntity({ name: `${shared} ledger`, description: `The ${shared} books`, tags: ['finance'] });
    await drainAll();
    const answer = async () => {
      const found = await search(`q=${shared}`);
      expect(found.status).toBe(200);
      const { took, ...rest } = found.body;
      expect(typeof took).toBe('number');
      return rest;
    };
    const before = await answer();
    for (const part of ['billing', 'invoices', 'payouts', 'refunds', 'taxes'])
      await createEntity({ name: `${shared} ${part}`, description: `${shared} ${shared}` }, suite.adminB.token);
    await drainAll();
    expect(await answer()).toEqual(before);
  });

  test("no search path returns another tenant's documents", async () => {
    const shared = word();
    const ours = await createEntity({ name: `${shared} ledger` });
    const theirs = await createEntity({ name: `${shared} billing` }, suite.adminB.token);
    await drainAll();

    for (const [token, own, other] of [
      [suite.adminA.token, ours, theirs],
      [suite.adminB.token, theirs, ours],
    ] as const) {
      const found = await search(`q=${shared}`, token);
      expect(found.status).toBe(200);
      expect(found.body.results.map((r: { id: string }) => r.id)).toEqual([own.id]);
      expect(found.body.total).toBe(1);
      const suggested = await call(token, 'GET', `/catalog/search-entities?q=${shared}`);
      expect(suggested).toMatchObject({ status: 200, body: { entities: [{ id: own.id, name: own.name }] } });
      expect(JSON.stringify(found.body) + JSON.stringify(suggested.body)).not.toContain(other.id);
    }
  });
});

test('type-ahead takes control characters in what is typed as spaces, never as an engine error', async () => {
  const name = `${word()} ledger`;
  const entity = await createEntity({ name });
  await drainAll();
  // U+001F is one of the completion field's separators: sent as is, the engine refuses the prefix.
  const typed = encodeURIComponent(`\u001f${name.slice(0, 8)}\u0004`);
  const suggested = await call(suite.adminA.token, 'GET', `/catalog/search-entities?q=${typed}`);
  expect(suggested).toMatchObject({ status: 200, body: { entities: [{ id: entity.id }] } });
  const nothingLeft = await call(
    suite.adminA.token,
    'GET',
    `/catalog/search-entities?q=${encodeURIComponent('\u001f\u0004')}`,
  );
  expect(nothingLeft).toMatchObject({ status: 200, body: { entities: [] } });
});

test('type-ahead reads digits: a name that differs only in them is not suggested', async () => {
  const letters = word();
  const wanted = await createEntity({ name: `${letters}42 ledger` });
  await createEntity({ name: `${letters}97 ledger` });
  await drainAll();
  const suggested = await call(suite.adminA.token, 'GET', `/catalog/search-entities?q=${letters}42`);
  expect(suggested.status).toBe(200);
  expect(suggested.body.entities.map((entity: { id: string }) => entity.id)).toEqual([wanted.id]);
});

describe('GET /search', () => {
  const topic = word();
  beforeAll(async () => {
    await createEntity({ name: `${topic} gateway`, type: 'service', lifecycle: 'production', tags: ['edge', 'go'] });
    await createEntity({ name: `${topic} router`, type: 'service', lifecycle: 'experimental', tags: ['edge'] });
    await createEntity({
      name: `${topic} client`,
      type: 'library',
      lifecycle: 'production',
      description: `A <script> free ${topic} client for every service`,
    });
  });

  test('facets count every match; filters narrow before paging', async () => {
    await drainAll();
    const all = await search(`q=${topic}`);
    expect(all.body.total).toBe(3);
    expect(all.body.facets.type).toEqual(
      expect.arrayContaining([
        { value: 'service', count: 2 },
        { value: 'library', count: 1 },
      ]),
    );
    expect(all.body.facets.lifecycle).toEqual(
      expect.arrayContaining([
        { value: 'production', count: 2 },
        { value: 'experimental', count: 1 },
      ]),
    );
    expect(all.body.facets.tags).toEqual(expect.arrayContaining([{ value: 'edge', count: 2 }]));
    expect(all.body.facets.collection).toEqual([{ value: 'entities', count: 3 }]);
    expect(all.body.sections).toEqual([{ collection: 'entities', results: all.body.results }]);

    expect((await search(`q=${topic}&types=library`)).body.total).toBe(1);
    expect((await search(`q=${topic}&types=library,service&lifecycle=production`)).body.total).toBe(2);
    expect((await search(`q=${topic}&tags=edge,go`)).body.results.map((r: { title: string }) => r.title)).toEqual([
      `${topic} gateway`,
    ]);
  });

  test('the last word matches as a prefix, and a typo is forgiven', async () => {
    await drainAll();
    expect((await search(`q=${topic} gate`)).body.results[0].title).toBe(`${topic} gateway`);
    const typo = `${topic.slice(0, -1)}${topic.endsWith('a') ? 'b' : 'a'}`;
    expect((await search(`q=${typo}`)).body.total).toBe(3);
  });

  test('snippets are escaped HTML with the matches marked', async () => {
    await drainAll();
    const found = await search(`q=${topic}&types=library`);
    expect(found.body.results[0].snippet).toBe(`A &lt;script&gt; free <mark>${topic}</mark> client for every service`);
  });

  test('pages through every match once, with the offset in page', async () => {
    await drainAll();
    const seen: string[] = [];
    let cursor = '';
    for (let pageNumber = 0; pageNumber < 5; pageNumber++) {
      const page = await search(`q=${topic}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.page).toMatchObject({ limit: 2, total: 3, offset: pageNumber * 2 });
      seen.push(...page.body.results.map((r: { id: string }) => r.id));
      if (!page.body.page.nextCursor) break;
      cursor = page.body.page.nextCursor;
    }
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
  });

  test('bad input is a 400 naming the field', async () => {
    for (const [query, field] of [
      ['', 'query.q'],
      ['q=', 'query.q'],
      ['q=%20%20', 'query.q'],
      [`q=x&limit=0`, 'query.limit'],
      [`q=x&lifecycle=immortal`, 'query.lifecycle'],
      [`q=x&cursor=9999`, 'query.cursor'],
      [`q=x&cursor=abc`, 'query.cursor'],
    ]) {
      const res = await search(query);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
        query,
        status: 400,
        code: 'INVALID_REQUEST',
      });
      if (field !== 'query.cursor' || query.endsWith('9999'))
        expect(res.body.error.details.map((d: { field?: string }) => d.field)).toContain(field);
    }
  });
});

describe('GET /analytics/search/{period}', () => {
  test("counts the tenant's searches: per day, top queries, zero-result ones, median time", async () => {
    // A tenant of its own, so the counts are this test's alone.
    const { token } = await sessionToken({
      tenant: `search-analytics-${suite.run}`,
      email: 'a@analytics.test',
      roles: ['admin'],
    });
    const search = async (query: string) => call(token, 'GET', `/search?${query}`);
    const asked = word();
    const nothing = word();
    for (let i = 0; i < 3; i++) expect((await search(`q=${asked.toUpperCase()}%20`)).status).toBe(200);
    expect((await search(`q=${nothing}`)).body.total).toBe(0);
    const apiKeyLike = `shp_${randomBytes(24).toString('hex')}`;
    const secret = `${word()} ${apiKeyLike}`;
    expect((await search(`q=${encodeURIComponent(secret)}`)).status).toBe(200);

    const week = await call(token, 'GET', '/analytics/search/7d');
    expect(week.status).toBe(200);
    expect(week.body.searches_per_day).toHaveLength(7);
    expect(week.body.searches_per_day[6].date).toBe(new Date().toISOString().slice(0, 10));
    expect(week.body.searches_per_day[6].count).toBe(5);
    expect(week.body.total_searches).toBe(5);
    expect(week.body.top_queries).toContainEqual({ query: asked, count: 3 });
    expect(week.body.zero_result_queries).toContainEqual({ query: nothing, count: 1 });
    expect(JSON.stringify(week.body)).not.toContain(apiKeyLike);
    expect(week.body.top_queries).toContainEqual({ query: `${secret.split(' ')[0]} [redacted]`, count: 1 });
    expect(week.body.median_latency_ms).toEqual(expect.any(Number));
    expect((await call(token, 'GET', '/analytics/search/90d')).body.searches_per_day).toHaveLength(90);

    const other = await call(suite.adminB.token, 'GET', '/analytics/search/30d');
    expect(JSON.stringify(other.body)).not.toContain(asked);
  });

  test('a period other than 7d, 30d or 90d is a 400', async () => {
    for (const period of ['1d', '7', 'week']) {
      const res = await call(suite.adminA.token, 'GET', `/analytics/search/${period}`);
      expect(res).toMatchObject({ status: 400, body: { error: { details: [{ field: 'params.period' }] } } });
    }
  });
});

test('while the engine is unreachable, search is a 503 and the catalog still answers', async () => {
  const config = testConfig();
  const api = await startApi({
    deps: await testDeps({ ...config, elasticsearch: { ...config.elasticsearch, url: 'http://127.0.0.1:1' } }),
  });
  try {
    const searched = await callApi(api, suite.adminA.token, 'GET', '/search?q=anything');
    expect(searched).toMatchObject({ status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE' } } });
    const suggested = await callApi(api, suite.adminA.token, 'GET', '/catalog/search-entities?q=any');
    expect(suggested.status).toBe(503);
    expect((await callApi(api, suite.adminA.token, 'GET', '/entities?limit=1')).status).toBe(200);
  } finally {
    await api.close();
  }
});
