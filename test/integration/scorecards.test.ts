import { randomUUID } from 'node:crypto';
import { useSearchIndex } from '../support/searchIndex';
import {
  callApi,
  sessionToken,
  startApi,
  startWorkers,
  type Reply,
  type TestApi,
  type TestWorkers,
} from '../support/harness';

// Scorecards over real HTTP with the real platform worker: configuration CRUD and validation,
// who may call what, tenant isolation, and scores that follow entity and rule changes with no
// request waiting for them (polled with a deadline).

const run = randomUUID().slice(0, 8);
let api: TestApi;
let workers: TestWorkers;
let adminA: { token: string; tenantId: string };
let adminB: { token: string; tenantId: string };
let viewerA: { token: string; tenantId: string };

jest.setTimeout(60_000);
const { drainAll } = useSearchIndex();

const call = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
  callApi(api, token, method, path, body);
const asAdmin = (method: string, path: string, body?: unknown) => call(adminA.token, method, path, body);

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

const scorecardOf = (id: string, token = adminA.token) => call(token, 'GET', `/entities/${id}/scorecard`);

async function createEntity(token: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(token, 'POST', '/entities', { type: 'service', ...body });
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  api = await startApi();
  workers = await startWorkers(['platform'], { scorecardWaker: true });
  adminA = await sessionToken({ tenant: `score-a-${run}`, email: 'admin@a.test', roles: ['admin'] });
  adminB = await sessionToken({ tenant: `score-b-${run}`, email: 'admin@b.test', roles: ['admin'] });
  viewerA = await sessionToken({ tenant: `score-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
}, 60_000);

afterAll(async () => {
  await workers?.stop();
  await api?.close();
});

describe('configuration', () => {
  test('a new tenant reads the default set: four categories, their rules and the default grading', async () => {
    const categories = await asAdmin('GET', '/admin/scorecards/categories');
    expect(categories.status).toBe(200);
    expect(categories.body.map((c: { name: string }) => c.name).sort()).toEqual([
      'Documentation',
      'Operations',
      'Ownership',
      'Security',
    ]);
    const rules = await asAdmin('GET', '/admin/scorecards/rules');
    expect(rules.body.find((r: { name: string }) => r.name === 'Has an owner')).toMatchObject({
      severity: 'medium',
      finding_type: 'missing_owner',
      check: { kind: 'field_set', field: 'owner' },
    });
    const grading = await asAdmin('GET', '/admin/scorecards/grading');
    expect(grading.body).toMatchObject({ a_plus: 95, a: 85, b: 70, c: 55, d: 40 });
    // Reading again seeds nothing more.
    expect((await asAdmin('GET', '/admin/scorecards/categories')).body).toHaveLength(4);
  });

  test('categories are created, replaced and deleted; a duplicate name is a 409, one with rules cannot go', async () => {
    const created = await asAdmin('POST', '/admin/scorecards/categories', { name: 'Reliability', weight: 2 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Reliability', weight: 2, description: null });
    expect((await asAdmin('POST', '/admin/scorecards/categories', { name: 'Reliability', weight: 1 })).status).toBe(
      409,
    );
    expect((await asAdmin('POST', '/admin/scorecards/categories', { name: 'Zero', weight: 0 })).status).toBe(400);
    const replaced = await asAdmin('PUT', `/admin/scorecards/categories/${created.body.id}`, {
      name: 'Resilience',
      description: 'Survives a bad day',
      weight: 1.5,
    });
    expect(replaced.body).toMatchObject({ name: 'Resilience', weight: 1.5, description: 'Survives a bad day' });

    const ownership = (await asAdmin('GET', '/admin/scorecards/categories')).body.find(
      (c: { name: string }) => c.name === 'Ownership',
    );
    const refused = await asAdmin('DELETE', `/admin/scorecards/categories/${ownership.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/still has rules/);
    expect((await asAdmin('DELETE', `/admin/scorecards/categories/${created.body.id}`)).status).toBe(204);
    expect((await asAdmin('DELETE', `/admin/scorecards/categories/${created.body.id}`)).status).toBe(404);
  });

  test('a rule with a bad check is a 400 naming the field of its own kind', async () => {
    const [category] = (await asAdmin('GET', '/admin/scorecards/categories')).body;
    const rule = (check: unknown, extra: object = {}) =>
      asAdmin('POST', '/admin/scorecards/rules', {
        name: `r-${randomUUID()}`,
        category_id: category.id,
        weight: 1,
        check,
        ...extra,
      });

    const tooFew = await rule({ kind: 'min_links', count: 0 });
    expect(tooFew.status).toBe(400);
    expect(tooFew.body.error.details).toContainEqual({ field: 'body.check.count', message: 'must be >= 1' });
    expect(JSON.stringify(tooFew.body.error.details)).not.toMatch(/severity|tag/);

    const unknownKind = await rule({ kind: 'run_script', script: 'curl evil' });
    expect(unknownKind.status).toBe(400);
    expect(unknownKind.body.error.details).toContainEqual(
      expect.objectContaining({ field: 'body.check.kind', message: expect.stringMatching(/allowed values/) }),
    );
    expect((await rule({ kind: 'has_docs', path: '/etc' })).status).toBe(400);
    expect((await rule({ kind: 'lifecycle_in', values: ['retired'] })).status).toBe(400);

    const noType = await rule({ kind: 'has_docs' }, { severity: 'high' });
    expect(noType.status).toBe(400);
    expect(noType.body.error.details).toContainEqual({
      field: 'finding_type',
      message: 'is required when severity is set',
    });
    const elsewhere = await asAdmin('POST', '/admin/scorecards/rules', {
      name: 'x',
      category_id: randomUUID(),
      weight: 1,
      check: { kind: 'has_docs' },
    });
    expect(elsewhere.status).toBe(400);
    expect((await rule({ kind: 'has_docs' }, { weight: 0 })).status).toBe(400);
  });

  test('rules are created, replaced and deleted', async () => {
    const [category] = (await asAdmin('GET', '/admin/scorecards/categories')).body;
    const created = await asAdmin('POST', '/admin/scorecards/rules', {
      name: 'Seen lately',
      category_id: category.id,
      weight: 2,
      check: { kind: 'workload_seen_within', days: 7 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Seen lately', weight: 2, severity: null, check: { days: 7 } });
    const replaced = await asAdmin('PUT', `/admin/scorecards/rules/${created.body.id}`, {
      name: 'Seen this month',
      category_id: category.id,
      weight: 1,
      severity: 'low',
      finding_type: 'no_workload',
      check: { kind: 'workload_seen_within', days: 30 },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: 'Seen this month', severity: 'low', check: { days: 30 } });
    const duplicate = await asAdmin('PUT', `/admin/scorecards/rules/${created.body.id}`, {
      ...replaced.body,
      name: 'Has an owner',
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(duplicate.status).toBe(409);
    expect((await asAdmin('DELETE', `/admin/scorecards/rules/${created.body.id}`)).status).toBe(204);
    expect((await asAdmin('GET', '/admin/scorecards/rules')).body.map((r: { id: string }) => r.id)).not.toContain(
      created.body.id,
    );
  });

  test('grading thresholds must decrease strictly; a valid set is stored', async () => {
    const flat = await asAdmin('PUT', '/admin/scorecards/grading', { a_plus: 90, a: 80, b: 80, c: 50, d: 30 });
    expect(flat.status).toBe(400);
    expect(flat.body.error.details).toContainEqual({ field: 'b', message: 'must be below a (80)' });
    expect(
      (await asAdmin('PUT', '/admin/scorecards/grading', { a_plus: 101, a: 80, b: 70, c: 50, d: 30 })).status,
    ).toBe(400);
    const stored = await asAdmin('PUT', '/admin/scorecards/grading', { a_plus: 95, a: 85, b: 70, c: 55, d: 40 });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ a_plus: 95, d: 40 });
  });

  test('reading the configuration takes admin:read and changing it admin:write; a viewer gets 403', async () => {
    expect((await call(viewerA.token, 'GET', '/admin/scorecards/rules')).status).toBe(403);
    expect(
      (await call(viewerA.token, 'PUT', '/admin/scorecards/grading', { a_plus: 95, a: 85, b: 70, c: 55, d: 40 }))
        .status,
    ).toBe(403);
  });

  test("another tenant neither sees nor changes a tenant's categories and rules", async () => {
    const [category] = (await asAdmin('GET', '/admin/scorecards/categories')).body;
    const [rule] = (await asAdmin('GET', '/admin/scorecards/rules')).body;
    const asB = (method: string, path: string, body?: unknown) => call(adminB.token, method, path, body);
    const idsOfB = [
      ...(await asB('GET', '/admin/scorecards/categories')).body,
      ...(await asB('GET', '/admin/scorecards/rules')).body,
    ].map((row: { id: string }) => row.id);
    expect(idsOfB).not.toContain(category.id);
    expect(idsOfB).not.toContain(rule.id);
    expect((await asB('PUT', `/admin/scorecards/categories/${category.id}`, { name: 'Mine', weight: 1 })).status).toBe(
      404,
    );
    expect((await asB('DELETE', `/admin/scorecards/categories/${category.id}`)).status).toBe(404);
    expect(
      (
        await asB('PUT', `/admin/scorecards/rules/${rule.id}`, {
          ...rule,
          id: undefined,
          created_at: undefined,
          updated_at: undefined,
        })
      ).status,
    ).toBe(404);
    expect((await asB('DELETE', `/admin/scorecards/rules/${rule.id}`)).status).toBe(404);
    const [ruleOfB] = (await asB('GET', '/admin/scorecards/rules')).body;
    expect(
      (
        await asB('POST', '/admin/scorecards/rules', {
          ...ruleOfB,
          id: undefined,
          created_at: undefined,
          updated_at: undefined,
          name: 'b-rule',
          category_id: category.id,
        })
      ).status,
    ).toBe(400);
  });
});

describe('scoring', () => {
  test('an entity is scored after it is created and again after it changes, with no request waiting', async () => {
    const id = await createEntity(adminA.token, { name: `Bare ${run}`, service_id: `bare-${run}` });
    const first = await eventually(
      () => scorecardOf(id),
      (res) => res.body.pending === false,
    );
    expect(first.status).toBe(200);
    const owner = first.body.rules.find((r: { name: string }) => r.name === 'Has an owner');
    expect(owner).toMatchObject({ passed: false, reason: 'owner is not set' });
    // Ownership 0 (weight 3), Documentation 0 (2), Operations 2 of 3 (2), Security 100 (3).
    expect(first.body).toMatchObject({ score: 43.33, grade: 'D' });
    expect(first.body.categories.map((c: { name: string }) => c.name)).toContain('Ownership');

    const changed = await call(adminA.token, 'PUT', `/entities/${id}`, {
      owner: 'payments',
      tier: 'tier1',
      description: 'Takes the money',
      lifecycle: 'production',
    });
    expect(changed.status).toBe(200);
    const second = await eventually(
      () => scorecardOf(id),
      (res) => res.body.rules.find((r: { name: string }) => r.name === 'Has an owner').passed,
    );
    expect(second.body.score).toBeGreaterThan(first.body.score);
    expect(Date.parse(second.body.evaluated_at)).toBeGreaterThan(Date.parse(first.body.evaluated_at));
    expect(second.body.entity_version).toBe(changed.body.updated_at);
  });

  test('a rule change re-scores every entity of the tenant', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map((n) => createEntity(adminA.token, { name: `Tagged ${n} ${run}`, tags: n === 1 ? ['pci'] : [] })),
    );
    await Promise.all(
      ids.map((id) =>
        eventually(
          () => scorecardOf(id),
          (res) => !res.body.pending,
        ),
      ),
    );
    const [category] = (await asAdmin('GET', '/admin/scorecards/categories')).body;
    const rule = await asAdmin('POST', '/admin/scorecards/rules', {
      name: `PCI tagged ${run}`,
      category_id: category.id,
      weight: 1,
      check: { kind: 'tag_present', tag: 'pci' },
    });
    const results = await Promise.all(
      ids.map((id) =>
        eventually(
          () => scorecardOf(id),
          (res) => res.body.rules.some((r: { rule_id: string }) => r.rule_id === rule.body.id),
        ),
      ),
    );
    expect(
      results.map((res) => res.body.rules.find((r: { rule_id: string }) => r.rule_id === rule.body.id).passed),
    ).toEqual([true, false, false]);
  });

  test("an entity's scorecard is pending before its first scoring, 404 for another tenant and unknown ids", async () => {
    const id = await createEntity(adminB.token, { name: `Other ${run}` });
    expect((await scorecardOf(id, adminA.token)).status).toBe(404);
    expect((await scorecardOf('no-such-entity', adminA.token)).status).toBe(404);
    const own = await scorecardOf(id, adminB.token);
    expect(own.status).toBe(200);
    if (own.body.pending) expect(own.body).toMatchObject({ grade: null, score: null, evaluated_at: null, rules: [] });
    expect((await scorecardOf(id, viewerA.token)).status).toBe(404);
  });

  test('the grade filters GET /entities and is a filter and facet of /search, following a grade change', async () => {
    const full = {
      owner: 'payments',
      tier: 'tier1',
      description: 'Fully described',
      lifecycle: 'production',
      links: [{ url: 'https://runbooks.test/x', title: 'Runbook' }],
      readme: { content: '# Hello', format: 'markdown' },
    };
    // A tenant of its own: the default rules, untouched by the tests above.
    const adminC = await sessionToken({ tenant: `score-c-${run}`, email: 'admin@c.test', roles: ['admin'] });
    const good = await createEntity(adminC.token, { name: `Gradewise good ${run}`, ...full });
    const bare = await createEntity(adminC.token, { name: `Gradewise bare ${run}` });
    const graded = await Promise.all(
      [good, bare].map((id) =>
        eventually(
          () => scorecardOf(id, adminC.token),
          (res) => !res.body.pending,
        ),
      ),
    );
    expect(graded.map((res) => res.body.grade)).toEqual(['A+', 'D']);

    const listed = async (grade: string) =>
      (await call(adminC.token, 'GET', `/entities?search=gradewise&grade=${grade}`)).body.entities.map(
        (e: { id: string }) => e.id,
      );
    expect(await listed('A%2B')).toEqual([good]);
    expect(await listed('A+')).toEqual([good]);
    expect(await listed('D')).toEqual([bare]);
    expect((await listed('A%2B,D')).sort()).toEqual([good, bare].sort());
    expect(await listed('B,C')).toEqual([]);
    const bad = await call(adminC.token, 'GET', '/entities?grade=E');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toContainEqual(expect.objectContaining({ field: 'grade' }));
    // Another tenant's grades never filter in this tenant's entities.
    expect((await call(adminA.token, 'GET', `/entities?search=gradewise&grade=A%2B,D`)).body.entities).toEqual([]);

    await drainAll();
    const searched = async (grade?: string) =>
      (await call(adminC.token, 'GET', `/search?q=gradewise${grade ? `&grade=${grade}` : ''}`)).body;
    const all = await searched();
    expect(all.facets.grade).toEqual(
      expect.arrayContaining([
        { value: 'A+', count: 1 },
        { value: 'D', count: 1 },
      ]),
    );
    expect((await searched('D')).results.map((r: { id: string }) => r.id)).toEqual([bare]);

    // The bare entity gets everything: its grade changes, and search follows through the outbox.
    await call(adminC.token, 'PUT', `/entities/${bare}`, {
      owner: 'payments',
      tier: 'tier2',
      description: 'Now described',
      lifecycle: 'production',
    });
    await eventually(
      () => scorecardOf(bare, adminC.token),
      (res) => res.body.grade !== 'D',
    );
    await drainAll();
    expect((await searched('D')).results).toEqual([]);
  });

  test('a failing rule with a severity opens a finding; the finding resolves when the rule passes again', async () => {
    const id = await createEntity(adminA.token, { name: `Unowned ${run}` });
    const ownerRule = (await asAdmin('GET', '/admin/scorecards/rules')).body.find(
      (r: { name: string }) => r.name === 'Has an owner',
    );
    const findings = async () =>
      (await call(adminA.token, 'GET', `/security/findings?entity_id=${id}&type=missing_owner`)).body.findings;
    const [opened] = await eventually(findings, (list) => list.length === 1);
    expect(opened).toMatchObject({
      source: 'scorecard',
      fingerprint: ownerRule.id,
      severity: 'medium',
      status: 'open',
      description: 'owner is not set',
    });

    // Scored again with the same result (a rule change re-scores all): still the one finding.
    await asAdmin('PUT', '/admin/scorecards/grading', { a_plus: 96, a: 85, b: 70, c: 55, d: 40 });
    await call(adminA.token, 'PUT', `/entities/${id}`, { owner: 'payments' });
    const [resolved] = await eventually(findings, (list) => list[0]?.status === 'resolved');
    expect(resolved.id).toBe(opened.id);
    expect(resolved.resolved_at).not.toBeNull();
    expect(await findings()).toHaveLength(1);
  });
});

describe('what else re-scores an entity', () => {
  const ruleOf = (res: Reply, name: string) => res.body.rules.find((r: { name: string }) => r.name === name);

  test('a dependency becoming deprecated re-scores the entities that depend on it', async () => {
    const adminE = await sessionToken({ tenant: `score-e-${run}`, email: 'admin@e.test', roles: ['admin'] });
    const library = await createEntity(adminE.token, { name: `Old lib ${run}`, service_id: `old-lib-${run}` });
    const app = await createEntity(adminE.token, {
      name: `App ${run}`,
      relations: [{ type: 'depends_on', target: `old-lib-${run}` }],
    });
    const rule = 'No deprecated dependencies';
    const before = await eventually(
      () => scorecardOf(app, adminE.token),
      (res) => !res.body.pending,
    );
    expect(ruleOf(before, rule).passed).toBe(true);
    await call(adminE.token, 'PUT', `/entities/${library}`, { lifecycle: 'deprecated' });
    const after = await eventually(
      () => scorecardOf(app, adminE.token),
      (res) => !ruleOf(res, rule).passed,
    );
    expect(ruleOf(after, rule).reason).toBe(`depends on deprecated old-lib-${run}`);
  });

  test("a scanner's finding re-scores its entity; the security rule fails while it is open", async () => {
    const adminF = await sessionToken({ tenant: `score-f-${run}`, email: 'admin@f.test', roles: ['admin'] });
    const id = await createEntity(adminF.token, { name: `Scanned ${run}` });
    const rule = 'No open finding above medium';
    await eventually(
      () => scorecardOf(id, adminF.token),
      (res) => !res.body.pending,
    );
    const reported = await call(adminF.token, 'POST', '/security/findings', {
      entity_id: id,
      type: 'cve',
      severity: 'high',
      title: 'CVE-2026-0001 in libfoo',
      source: 'scanner',
    });
    expect(reported.status).toBe(201);
    const failing = await eventually(
      () => scorecardOf(id, adminF.token),
      (res) => !ruleOf(res, rule).passed,
    );
    expect(ruleOf(failing, rule).reason).toBe('open high finding, above medium');
    await call(adminF.token, 'PATCH', `/security/findings/${reported.body.id}`, { status: 'resolved' });
    await eventually(
      () => scorecardOf(id, adminF.token),
      (res) => ruleOf(res, rule).passed,
    );
  });

  test('giving an already failing rule a severity opens its findings at the re-score that follows', async () => {
    const adminG = await sessionToken({ tenant: `score-g-${run}`, email: 'admin@g.test', roles: ['admin'] });
    const asG = (method: string, path: string, body?: unknown) => call(adminG.token, method, path, body);
    const id = await createEntity(adminG.token, { name: `Untiered ${run}`, owner: 'payments' });
    await eventually(
      () => scorecardOf(id, adminG.token),
      (res) => !res.body.pending,
    );
    const tierRule = (await asG('GET', '/admin/scorecards/rules')).body.find(
      (r: { name: string }) => r.name === 'Has a tier',
    );
    const { id: ruleId, created_at: _c, updated_at: _u, ...body } = tierRule;
    expect(
      (
        await asG('PUT', `/admin/scorecards/rules/${ruleId}`, {
          ...body,
          severity: 'low',
          finding_type: 'missing_tier',
        })
      ).status,
    ).toBe(200);
    const findings = async () =>
      (await asG('GET', `/security/findings?entity_id=${id}&type=missing_tier`)).body.findings;
    const [opened] = await eventually(findings, (list) => list.length === 1);
    expect(opened).toMatchObject({
      fingerprint: ruleId,
      severity: 'low',
      status: 'open',
      description: 'tier is not set',
    });
  });

  test('the platform pool creates the nightly re-score and the daily initiative schedules', async () => {
    for (const [scheduleId, workflowType] of [
      ['shipyard-scorecards-rescore', 'rescoreAllTenants'],
      ['shipyard-initiative-deadlines', 'initiativeDeadlines'],
    ]) {
      const schedule = await api.deps.temporal.schedule.getHandle(scheduleId).describe();
      expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType, taskQueue: 'shipyard-platform' });
      expect(schedule.spec.intervals?.map((interval) => interval.every)).toEqual([86_400_000]);
    }
  });
});

describe('initiatives', () => {
  test('initiatives are created with their rules, read with progress per team and entity, and validated', async () => {
    const adminD = await sessionToken({ tenant: `score-d-${run}`, email: 'admin@d.test', roles: ['admin'] });
    const asD = (method: string, path: string, body?: unknown) => call(adminD.token, method, path, body);
    const rules = (await asD('GET', '/admin/scorecards/rules')).body;
    const ruleId = (name: string) => rules.find((r: { name: string }) => r.name === name).id;
    const owned = await createEntity(adminD.token, { name: `Owned ${run}`, owner: 'payments', tier: 'tier1' });
    const unowned = await createEntity(adminD.token, { name: `Unowned ${run}`, tier: 'tier1' });
    const library = await createEntity(adminD.token, { name: `Library ${run}`, type: 'library' });
    await Promise.all(
      [owned, unowned, library].map((id) =>
        eventually(
          () => scorecardOf(id, adminD.token),
          (res) => !res.body.pending,
        ),
      ),
    );

    const body = {
      name: 'Everyone owned',
      description: 'Q4 ownership push',
      rule_ids: [ruleId('Has an owner'), ruleId('Has a tier')],
      entity_filter: { type: 'service' },
      target_date: '2020-01-31',
    };
    const created = await asD('POST', '/admin/scorecards/initiatives', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...body, actions_opened_at: null });
    expect((await asD('GET', '/admin/scorecards/initiatives')).body.map((i: { id: string }) => i.id)).toEqual([
      created.body.id,
    ]);

    const read = await asD('GET', `/admin/scorecards/initiatives/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.progress).toMatchObject({
      total: 2,
      passing: 1,
      by_team: [
        { owner: 'payments', total: 1, passing: 1 },
        { owner: null, total: 1, passing: 0 },
      ],
    });
    expect(read.body.progress.entities).toEqual([
      {
        entity_id: unowned,
        name: `Unowned ${run}`,
        owner: null,
        passing: false,
        failing_rule_ids: [ruleId('Has an owner')],
      },
      { entity_id: owned, name: `Owned ${run}`, owner: 'payments', passing: true, failing_rule_ids: [] },
    ]);
    expect(
      (await asD('GET', `/admin/scorecards/initiatives/${created.body.id}?limit=1&offset=1`)).body.progress.entities,
    ).toHaveLength(1);

    const unknownRule = await asD('POST', '/admin/scorecards/initiatives', { ...body, rule_ids: [randomUUID()] });
    expect(unknownRule.status).toBe(400);
    expect(unknownRule.body.error.details).toContainEqual({
      field: 'rule_ids',
      message: 'must name rules of this tenant',
    });
    expect((await asD('POST', '/admin/scorecards/initiatives', { ...body, target_date: 'soon' })).status).toBe(400);
    expect((await asD('POST', '/admin/scorecards/initiatives', { ...body, rule_ids: [] })).status).toBe(400);
    // Another tenant's rules are unknown here, and its initiatives invisible.
    const ruleOfA = (await asAdmin('GET', '/admin/scorecards/rules')).body[0].id;
    expect((await asD('POST', '/admin/scorecards/initiatives', { ...body, rule_ids: [ruleOfA] })).status).toBe(400);
    expect((await asAdmin('GET', `/admin/scorecards/initiatives/${created.body.id}`)).status).toBe(404);
    expect((await asAdmin('PUT', `/admin/scorecards/initiatives/${created.body.id}`, body)).status).toBe(404);
    expect((await asAdmin('DELETE', `/admin/scorecards/initiatives/${created.body.id}`)).status).toBe(404);
    expect((await asAdmin('GET', '/admin/scorecards/initiatives')).body).toEqual([]);
    expect((await call(viewerA.token, 'GET', '/admin/scorecards/initiatives')).status).toBe(403);

    // Past its date: one action per entity still failing, for its owner, however often the run repeats.
    const runDeadlines = () =>
      api.deps.temporal.workflow.execute('initiativeDeadlines', {
        taskQueue: 'shipyard-platform',
        workflowId: `initiative-deadlines-test-${randomUUID()}`,
      });
    await runDeadlines();
    await runDeadlines();
    const actions = (await asD('GET', '/governance/actions?source_type=initiative')).body.actions;
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ entity_id: unowned, source_id: created.body.id, status: 'open' });
    expect(
      (await asD('GET', `/admin/scorecards/initiatives/${created.body.id}`)).body.actions_opened_at,
    ).not.toBeNull();

    const replaced = await asD('PUT', `/admin/scorecards/initiatives/${created.body.id}`, {
      ...body,
      name: 'Owned by all',
    });
    expect(replaced.body).toMatchObject({ name: 'Owned by all' });
    expect(replaced.body.actions_opened_at).not.toBeNull();
    expect((await asD('DELETE', `/admin/scorecards/initiatives/${created.body.id}`)).status).toBe(204);
    expect((await asD('GET', `/admin/scorecards/initiatives/${created.body.id}`)).status).toBe(404);
  });
});
