import { useCatalogSuite } from '../support/catalogSuite';
import { startFakeSourceHost, type FakeCommit, type FakeSourceHost } from '../support/fakeSourceHost';
import { startWorkers, testConfig, type TestWorkers } from '../support/harness';
import { useSearchIndex } from '../support/searchIndex';

// The bus factor of known histories: commits served by the fake source host over its socket,
// fetched by a real crawl (the search worker), kept, and read through GET /insights/bus-factor,
// the /entities filter and a scorecard rule (the platform worker scores); tenant B sees none of it.

jest.setTimeout(120_000);
const { suite, call, uniqueId, createEntity } = useCatalogSuite();
useSearchIndex();
let host: FakeSourceHost;
let workers: TestWorkers;

const DAY_MS = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);
/** At most this many commit details per crawl: the team's history takes two crawls. */
const FETCH_PER_CRAWL = 5;

const commit = (email: string, lines: number, days = 5, extra: Partial<FakeCommit> = {}): FakeCommit => ({
  author_name: email.split('@')[0].toUpperCase(),
  author_email: email,
  committed_at: daysAgo(days),
  additions: Math.ceil(lines / 2),
  deletions: Math.floor(lines / 2),
  ...extra,
});

const HISTORIES: Record<string, FakeCommit[]> = {
  // One author, three commits.
  'acme/solo': [commit('solo@a.test', 10, 3), commit('solo@a.test', 20, 2), commit('Solo@A.test', 5, 1)],
  // 40 / 30 / 30: the largest alone is not over half; with either 30 it is. Equal shares by email.
  'acme/tie': [commit('carol@a.test', 40), commit('bob@a.test', 30), commit('alice@a.test', 30)],
  // 25 + 20 + 15 of 100 is the first sum over half; the merge commit's lines are not counted.
  'acme/team': [
    commit('ann@a.test', 25, 9),
    commit('ben@a.test', 20, 8),
    commit('cat@a.test', 15, 7),
    commit('dan@a.test', 15, 6),
    commit('eve@a.test', 10, 5),
    commit('fay@a.test', 10, 4),
    commit('gus@a.test', 5, 3),
    commit('merger@a.test', 10_000, 2, { parents: 2 }),
  ],
  // 200 days ago one author wrote most; lately two share the work; 400 days is past the history kept.
  'acme/aged': [
    commit('old@a.test', 1000, 200),
    commit('new1@a.test', 10, 10),
    commit('new2@a.test', 10, 10),
    commit('ancient@a.test', 99_999, 400),
  ],
  // Nothing in the window.
  'acme/quiet': [commit('gone@a.test', 10, 100)],
  // No commit at all: the host answers 409 to its commit list.
  'acme/empty': [],
};

let repositoryIds: Record<string, string>;
let entities: Record<'solo' | 'team' | 'both' | 'unlinked' | 'quiet', string>;

const busFactor = (query: string, token = suite.adminA.token) => call(token, 'GET', `/insights/bus-factor?${query}`);

async function recrawl(): Promise<void> {
  const res = await call(suite.adminA.token, 'POST', '/admin/recrawl');
  expect(res.status).toBe(202);
  await suite.api.deps.temporal.workflow.getHandle(res.body.operation_id).result();
}

const commitDetailRequests = () => host.requests.filter((r) => /\/commits\/[0-9a-f]{40}$/.test(r.path)).length;

beforeAll(async () => {
  host = await startFakeSourceHost();
  for (const [name, history] of Object.entries(HISTORIES)) {
    host.repositories.add(name);
    if (history.length) host.commits.set(name, history);
  }
  const integration = await call(suite.adminA.token, 'POST', '/integrations', {
    name: 'source host',
    type: 'vcs-host-a',
    config: { base_url: host.url, token: host.token },
  });
  expect(integration.status).toBe(201);
  const link = (name: string) => ({ title: 'code', url: `${host.url}/${name}` });
  entities = {
    solo: (await createEntity({ name: uniqueId('Solo'), links: [link('acme/solo')] })).id,
    team: (await createEntity({ name: uniqueId('Team'), links: [link('acme/team')] })).id,
    both: (await createEntity({ name: uniqueId('Both'), links: [link('acme/solo'), link('acme/tie')] })).id,
    unlinked: (await createEntity({ name: uniqueId('Unlinked') })).id,
    quiet: (await createEntity({ name: uniqueId('Quiet'), links: [link('acme/quiet')] })).id,
  };
  const config = testConfig();
  workers = await startWorkers(['search', 'platform'], {
    config: { ...config, commitHistory: { ...config.commitHistory, fetchPerCrawl: FETCH_PER_CRAWL } },
    scorecardWaker: true,
  });
  await recrawl();
  const listed = await call(suite.adminA.token, 'GET', '/repositories?page_size=100');
  repositoryIds = Object.fromEntries(
    listed.body.repositories.map((r: { full_name: string; id: string }) => [r.full_name, r.id]),
  );
}, 120_000);
afterAll(async () => {
  await workers?.stop();
  await host?.close();
});

describe('a crawl keeps the commit history', () => {
  test('at most the configured commit details per crawl, oldest first; the next crawl continues where it stopped', async () => {
    // The first crawl: every repository's commits but the team's last two, the old one out of the window.
    const team = await busFactor(`repository_id=${repositoryIds['acme/team']}`);
    expect(team.body.contributors.map((c: { email: string }) => c.email)).toEqual([
      'ann@a.test',
      'ben@a.test',
      'cat@a.test',
      'dan@a.test',
      'eve@a.test',
    ]);
    const before = commitDetailRequests();
    await recrawl();
    // Only the two commits not kept yet are fetched again (the merge commit never is).
    expect(commitDetailRequests() - before).toBe(2);
  });
});

describe('GET /insights/bus-factor', () => {
  test('a single author is a bus factor of 1 (emails in any case are one contributor)', async () => {
    const res = await busFactor(`repository_id=${repositoryIds['acme/solo']}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      repository_id: repositoryIds['acme/solo'],
      window: '90d',
      bus_factor: 1,
      lines: 35,
      contributors: [{ name: 'SOLO', email: 'solo@a.test', lines: 35, share: 1 }],
    });
  });

  test('a tie: the fewest contributors over half, equal shares listed by email', async () => {
    const res = await busFactor(`repository_id=${repositoryIds['acme/tie']}`);
    expect(res.body.bus_factor).toBe(2);
    expect(res.body.contributors).toEqual([
      { name: 'CAROL', email: 'carol@a.test', lines: 40, share: 0.4 },
      { name: 'ALICE', email: 'alice@a.test', lines: 30, share: 0.3 },
      { name: 'BOB', email: 'bob@a.test', lines: 30, share: 0.3 },
    ]);
  });

  test('a typical team of seven is a bus factor of 3; a merge commit counts nothing', async () => {
    const res = await busFactor(`entity_id=${entities.team}`);
    expect(res.body).toMatchObject({
      entity: { id: entities.team },
      bus_factor: 3,
      lines: 100,
      repositories: [{ id: repositoryIds['acme/team'], full_name: 'acme/team' }],
    });
    expect(res.body.contributors).toHaveLength(7);
  });

  test('the window leaves out older commits; the kept history leaves out what is past it', async () => {
    const recent = await busFactor(`repository_id=${repositoryIds['acme/aged']}&window=90d`);
    expect(recent.body).toMatchObject({ bus_factor: 2, lines: 20 });
    const year = await busFactor(`repository_id=${repositoryIds['acme/aged']}&window=365d`);
    expect(year.body).toMatchObject({ bus_factor: 1, lines: 1020 });
    expect(year.body.contributors.map((c: { email: string }) => c.email)).toEqual([
      'old@a.test',
      'new1@a.test',
      'new2@a.test',
    ]);
    const month = await busFactor(`repository_id=${repositoryIds['acme/aged']}&window=30d`);
    expect(new Date(month.body.since).getTime()).toBeGreaterThan(daysAgo(31).getTime());
  });

  test("an entity's repositories count together", async () => {
    const res = await busFactor(`entity_id=${entities.both}`);
    // solo 35, carol 40, alice 30, bob 30 of 135: 40 + 35 = 75 > 67.5.
    expect(res.body).toMatchObject({ bus_factor: 2, lines: 135 });
    expect(res.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual(['acme/solo', 'acme/tie']);
  });

  test('null with a reason: no commits in the window, no linked repository; an empty repository crawls', async () => {
    expect((await busFactor(`entity_id=${entities.quiet}`)).body).toMatchObject({
      bus_factor: null,
      reason: 'no_commits_in_window',
      lines: 0,
      contributors: [],
    });
    expect((await busFactor(`entity_id=${entities.unlinked}`)).body).toMatchObject({
      bus_factor: null,
      reason: 'no_linked_repository',
      repositories: [],
    });
    const empty = await busFactor(`repository_id=${repositoryIds['acme/empty']}`);
    expect(empty.body).toMatchObject({ bus_factor: null, reason: 'no_commits_in_window' });
    const listed = await call(suite.adminA.token, 'GET', '/repositories?search=acme/empty');
    expect(listed.body.repositories[0].crawl_status).toBe('crawled');
  });

  test('bad queries are 400s; unknown ids 404s', async () => {
    expect((await busFactor(`entity_id=${entities.solo}&repository_id=${repositoryIds['acme/solo']}`)).status).toBe(
      400,
    );
    expect((await busFactor(`entity_id=${entities.solo}&window=7d`)).status).toBe(400);
    expect((await busFactor('repository_id=not-a-uuid')).status).toBe(400);
    expect((await busFactor('limit=0')).status).toBe(400);
    expect((await busFactor(`repository_id=${entities.solo}`)).status).toBe(404);
    expect((await busFactor('entity_id=no-such-service')).status).toBe(404);
  });

  test('without ids: the entities by their kept bus factor, lowest first, paged', async () => {
    const first = await busFactor('limit=2');
    expect(first.status).toBe(200);
    expect(first.body.window).toBe('90d');
    const page = first.body.entities.map((e: { id: string; bus_factor: number | null }) => [e.id, e.bus_factor]);
    expect(page).toEqual([[entities.solo, 1], expect.anything()]);
    expect(first.body.next_offset).toBe(2);
    const rest = await busFactor('limit=50&offset=2');
    const all = [...first.body.entities, ...rest.body.entities];
    expect(Object.fromEntries(all.map((e: { id: string; bus_factor: number | null }) => [e.id, e.bus_factor]))).toEqual(
      {
        [entities.solo]: 1,
        [entities.both]: 2,
        [entities.team]: 3,
        [entities.quiet]: null,
      },
    );
    expect(rest.body.next_offset).toBeNull();
  });

  test('another tenant sees none of it: 404 for the entity and repository, an empty list', async () => {
    const other = suite.adminB.token;
    expect((await busFactor(`entity_id=${entities.solo}`, other)).status).toBe(404);
    expect((await busFactor(`repository_id=${repositoryIds['acme/solo']}`, other)).status).toBe(404);
    expect((await busFactor('', other)).body.entities).toEqual([]);
    expect((await call(other, 'GET', '/entities?bus_factor=1')).body.entities).toEqual([]);
  });
});

test('/entities?bus_factor=1 lists the entities whose kept bus factor is 1', async () => {
  const res = await call(suite.adminA.token, 'GET', '/entities?bus_factor=1');
  expect(res.status).toBe(200);
  expect(res.body.entities.map((e: { id: string }) => e.id)).toEqual([entities.solo]);
  expect(res.body.pagination.total).toBe(1);
  const three = await call(suite.adminA.token, 'GET', '/entities?bus_factor=3&fields=name');
  expect(three.body.entities.map((e: { id: string }) => e.id)).toEqual([entities.team]);
  expect((await call(suite.adminA.token, 'GET', '/entities?bus_factor=0')).status).toBe(400);
});

test('a new commit changes the kept figure at the next crawl, and a bus_factor rule scores it', async () => {
  const [category] = (await call(suite.adminA.token, 'GET', '/admin/scorecards/categories')).body;
  const rule = await call(suite.adminA.token, 'POST', '/admin/scorecards/rules', {
    name: 'More than one author',
    category_id: category.id,
    weight: 1,
    check: { kind: 'bus_factor', min: 2 },
  });
  expect(rule.status).toBe(201);
  const ruleOf = async () => {
    const res = await call(suite.adminA.token, 'GET', `/entities/${entities.solo}/scorecard`);
    return res.body.rules?.find((r: { rule_id: string }) => r.rule_id === rule.body.id);
  };
  const failing = await eventually(ruleOf, (result) => result !== undefined);
  expect(failing).toMatchObject({ passed: false, reason: 'bus factor 1, below 2' });

  host.commits.get('acme/solo')!.push(commit('pal@a.test', 35, 0.5));
  await recrawl();
  expect((await busFactor(`entity_id=${entities.solo}`)).body.bus_factor).toBe(2);
  expect((await call(suite.adminA.token, 'GET', '/entities?bus_factor=1')).body.entities).toEqual([]);
  const passing = await eventually(ruleOf, (result) => result?.passed === true);
  expect(passing.reason).toBe('bus factor 2');
});

test('an entity created with a link to a crawled repository has its kept figure at once, not at the next crawl', async () => {
  const created = await createEntity({
    name: uniqueId('Newcomer'),
    links: [{ title: 'code', url: `${host.url}/acme/team` }],
  });
  const three = await call(suite.adminA.token, 'GET', '/entities?bus_factor=3&limit=100');
  // The team's entity and the one linking to both repositories since the pal's commit, and the newcomer.
  expect(three.body.entities.map((e: { id: string }) => e.id).sort()).toEqual(
    [entities.team, entities.both, created.id].sort(),
  );
});

/** Polls `read` until `done` holds of its answer, failing after `deadlineMs`. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 30_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`not reached within ${deadlineMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
