import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { seedEntity } from '../support/clusterFixtures';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from '../support/harness';

// Security findings over real HTTP: reports deduplicated (also under concurrency), status moves
// and refusals, the list and its filters and pages, the critical finding's one governance action,
// the overview's counts, audit entries in the entity's /activity, who may call, and tenant isolation.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let editorA: { token: string; tenantId: string };
let viewerA: { token: string; tenantId: string };
let editorB: { token: string; tenantId: string };
let checkout: string;
let billing: string;

const call = (method: string, path: string, body?: unknown, token = editorA.token): Promise<Reply> =>
  callApi(api, token, method, path, body);

const report = (body: Record<string, unknown>, token = editorA.token) =>
  call(
    'POST',
    '/security/findings',
    {
      entity_id: checkout,
      type: 'exposed_secret',
      severity: 'high',
      title: 'AWS key in repo',
      source: 'scanner',
      ...body,
    },
    token,
  );

beforeAll(async () => {
  api = await startApi();
  editorA = await sessionToken({ tenant: `sec-a-${run}`, email: 'editor@a.test', roles: ['editor'] });
  viewerA = await sessionToken({ tenant: `sec-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
  editorB = await sessionToken({ tenant: `sec-b-${run}`, email: 'editor@b.test', roles: ['editor'] });
  await withTenant(api.deps.db, editorA.tenantId, (trx) =>
    trx('teams').insert({ tenant_id: editorA.tenantId, name: 'Payments', slug: 'payments' }),
  );
  checkout = await seedEntity(api.deps.db, editorA.tenantId, 'checkout', 'payments');
  billing = await seedEntity(api.deps.db, editorA.tenantId, 'billing');
});
afterAll(() => api.close());

test('a new finding answers 201 with the finding; the same one reported again answers 200 with it, refreshed', async () => {
  const first = await report({
    fingerprint: `fp-${run}`,
    description: 'Found in config.yml',
    remediation: 'Rotate it',
  });
  expect(first.status).toBe(201);
  expect(first.body).toMatchObject({
    entity_id: checkout,
    entity_name: 'checkout',
    status: 'open',
    source: 'scanner',
    fingerprint: `fp-${run}`,
    resolved_at: null,
  });
  const again = await report({
    fingerprint: `fp-${run}`,
    severity: 'medium',
    title: 'AWS key (rotated?)',
    source: 'manual',
  });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({
    id: first.body.id,
    severity: 'medium',
    title: 'AWS key (rotated?)',
    description: 'Found in config.yml',
    remediation: 'Rotate it',
    source: 'scanner',
  });
  expect((await call('GET', `/security/findings/${first.body.id}`)).body).toEqual(again.body);
});

test('without a fingerprint, the type and title identify a finding', async () => {
  const first = await report({ type: 'vulnerable_dependency', title: 'lodash 4.17.15' });
  expect(first.status).toBe(201);
  expect(first.body.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  expect((await report({ type: 'vulnerable_dependency', title: 'lodash 4.17.15' })).body.id).toBe(first.body.id);
  expect((await report({ type: 'vulnerable_dependency', title: 'lodash 4.17.20' })).status).toBe(201);
  expect((await report({ type: 'vulnerable_dependency', title: 'lodash 4.17.15', entity_id: billing })).status).toBe(
    201,
  );
});

test('concurrent reports of the same finding make one row: one 201, the others 200 with the same id', async () => {
  const replies = await Promise.all(Array.from({ length: 8 }, () => report({ fingerprint: `race-${run}` })));
  expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
  expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
  const rows = await withTenant(api.deps.db, editorA.tenantId, (trx) =>
    trx('security_findings').where({ fingerprint: `race-${run}` }),
  );
  expect(rows).toHaveLength(1);
});

test('reporting refuses the scorecard source, an unknown entity, another tenant’s entity and bad fields with 400', async () => {
  for (const body of [
    { source: 'scorecard' },
    { entity_id: randomUUID() },
    { severity: 'urgent' },
    { title: '' },
    { fingerprint: 'x'.repeat(201) },
    { status: 'resolved' },
  ]) {
    expect((await report(body)).status).toBe(400);
  }
  expect((await report({}, editorB.token)).status).toBe(400);
});

test('status moves follow the table: resolved sets resolved_at, reopening clears it; other moves are 409', async () => {
  const { id } = (await report({ fingerprint: `moves-${run}` })).body;
  const move = (status: string) => call('PATCH', `/security/findings/${id}`, { status });
  expect((await move('acknowledged')).body.status).toBe('acknowledged');
  const resolved = (await move('resolved')).body;
  expect(resolved.status).toBe('resolved');
  expect(resolved.resolved_at).not.toBeNull();
  const refused = await move('false_positive');
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toBe(
    'A finding cannot move from resolved to false_positive; from resolved it can move to open',
  );
  expect((await move('acknowledged')).status).toBe(409);
  const activity = (await call('GET', `/entities/${checkout}/activity?limit=5`)).body.items;
  expect(activity[0]).toMatchObject({ eventType: 'security_finding.status_changed', status: 'failure' });
  expect((await move('resolved')).body.resolved_at).toBe(resolved.resolved_at);
  expect((await move('open')).body).toMatchObject({ status: 'open', resolved_at: null });
  expect((await move('false_positive')).body.status).toBe('false_positive');
  expect((await move('resolved')).status).toBe(409);
  expect((await call('PATCH', `/security/findings/${randomUUID()}`, { status: 'open' })).status).toBe(404);
  expect((await call('PATCH', `/security/findings/${id}`, { status: 'closed' })).status).toBe(400);
});

test('a resolved finding reported again reopens; a false positive reported again stays one', async () => {
  const resolved = (await report({ fingerprint: `again-${run}` })).body.id;
  await call('PATCH', `/security/findings/${resolved}`, { status: 'resolved' });
  expect((await report({ fingerprint: `again-${run}` })).body).toMatchObject({
    id: resolved,
    status: 'open',
    resolved_at: null,
  });
  const dismissed = (await report({ fingerprint: `fp-again-${run}` })).body.id;
  await call('PATCH', `/security/findings/${dismissed}`, { status: 'false_positive' });
  expect((await report({ fingerprint: `fp-again-${run}` })).body).toMatchObject({
    id: dismissed,
    status: 'false_positive',
  });
});

test('a critical finding opens one governance action for the owning team, once, even when reported concurrently', async () => {
  const replies = await Promise.all(
    Array.from({ length: 4 }, () =>
      report({ fingerprint: `crit-${run}`, severity: 'critical', remediation: 'Rotate' }),
    ),
  );
  const findingId = replies[0].body.id;
  await call('PATCH', `/security/findings/${findingId}`, { status: 'resolved' });
  await report({ fingerprint: `crit-${run}`, severity: 'critical' });
  const actions = (await call('GET', '/governance/actions?source_type=finding')).body;
  expect(actions.total).toBe(1);
  expect(actions.actions[0]).toMatchObject({
    source_id: findingId,
    entity_id: checkout,
    assigned_to: 'payments',
    priority: 'critical',
    status: 'open',
    type: 'security_finding',
    title: 'Critical finding: AWS key in repo',
    description: 'Rotate',
    created_by: 'editor@a.test',
  });
});

test('the list filters by severity, entity, type and status, pages by opaque cursor with the filtered total', async () => {
  const entity = await seedEntity(api.deps.db, editorA.tenantId, `listed-${run}`);
  for (const [type, severity] of [
    ['a', 'low'],
    ['b', 'low'],
    ['c', 'info'],
    ['d', 'low'],
  ]) {
    expect((await report({ entity_id: entity, type, severity, title: type })).status).toBe(201);
  }
  const list = (query: string) => call('GET', `/security/findings?entity_id=${entity}&${query}`);
  const types = (res: Reply) => res.body.findings.map((f: { type: string }) => f.type);
  expect(types(await list('severity=low'))).toEqual(['d', 'b', 'a']);
  expect(types(await list('type=c'))).toEqual(['c']);
  const first = await list('severity=low&limit=2');
  expect(types(first)).toEqual(['d', 'b']);
  expect(first.body.pagination.total).toBe(3);
  const second = await list(`severity=low&limit=2&cursor=${first.body.pagination.nextCursor}`);
  expect(types(second)).toEqual(['a']);
  expect(second.body.pagination).toEqual({ total: 3, nextCursor: null });
  const [b] = first.body.findings.slice(1);
  await call('PATCH', `/security/findings/${b.id}`, { status: 'acknowledged' });
  expect(types(await list('status=acknowledged'))).toEqual(['b']);
  expect((await call('GET', '/security/findings?cursor=nope')).status).toBe(400);
  expect((await call('GET', '/security/findings?limit=101')).status).toBe(400);
  expect((await call('GET', '/security/findings?entity_id=checkout')).status).toBe(400);
  expect((await call('GET', `/security/findings/urn:uuid:${b.id}`)).status).toBe(400);
  await withTenant(api.deps.db, editorA.tenantId, (trx) => trx('entities').where({ id: entity }).delete());
});

test('status changes and reports show in the entity’s /activity', async () => {
  const entity = await seedEntity(api.deps.db, editorA.tenantId, `audited-${run}`);
  const { id } = (await report({ entity_id: entity, fingerprint: 'audited' })).body;
  await call('PATCH', `/security/findings/${id}`, { status: 'resolved' });
  await report({ entity_id: entity, fingerprint: 'audited' });
  const items = (await call('GET', `/entities/${entity}/activity`)).body.items as {
    eventType: string;
    action: string;
  }[];
  expect(items.map((item) => [item.eventType, item.action]).reverse()).toEqual([
    ['security_finding.opened', 'open'],
    ['security_finding.status_changed', 'resolved'],
    ['security_finding.reopened', 'reopen'],
  ]);
  await withTenant(api.deps.db, editorA.tenantId, (trx) => trx('entities').where({ id: entity }).delete());
});

test('the overview grades the mean score by the tenant’s thresholds and counts grades and active findings', async () => {
  const viewer = await sessionToken({ tenant: `sec-o-${run}`, email: 'editor@o.test', roles: ['editor'] });
  const db = api.deps.db;
  const scored: string[] = [];
  for (const [name, score, grade] of [
    ['a', 96, 'A+'],
    ['b', 72, 'B'],
    ['c', 30, 'F'],
  ] as const) {
    const id = await seedEntity(db, viewer.tenantId, name);
    scored.push(id);
    await withTenant(db, viewer.tenantId, (trx) =>
      trx('entity_scorecards').insert({
        entity_id: id,
        tenant_id: viewer.tenantId,
        score,
        grade,
        entity_version: trx.fn.now(),
      }),
    );
  }
  await seedEntity(db, viewer.tenantId, 'unscored');
  const post = (severity: string, fingerprint: string) =>
    call(
      'POST',
      '/security/findings',
      { entity_id: scored[0], type: 't', severity, title: 't', source: 'scanner', fingerprint },
      viewer.token,
    );
  for (const [severity, fingerprint] of [
    ['high', '1'],
    ['high', '2'],
    ['low', '3'],
    ['info', '4'],
    ['critical', '5'],
  ]) {
    await post(severity, fingerprint);
  }
  const ids = await withTenant(db, viewer.tenantId, (trx) =>
    trx('security_findings').orderBy('fingerprint').pluck('id'),
  );
  await call('PATCH', `/security/findings/${ids[1]}`, { status: 'acknowledged' }, viewer.token);
  await call('PATCH', `/security/findings/${ids[2]}`, { status: 'resolved' }, viewer.token);
  await call('PATCH', `/security/findings/${ids[3]}`, { status: 'false_positive' }, viewer.token);
  const overview = await call('GET', '/security/overview', undefined, viewer.token);
  expect(overview.status).toBe(200);
  // Mean 66: C by the default thresholds (B from 70, C from 55).
  expect(overview.body).toEqual({
    overall_grade: 'C',
    total_entities: 4,
    by_grade: { 'A+': 1, A: 0, B: 1, C: 0, D: 0, F: 1, ungraded: 1 },
    findings_summary: { critical: 1, high: 2, medium: 0, low: 0, info: 0 },
  });
  await withTenant(db, viewer.tenantId, (trx) =>
    trx('scorecard_grading').insert({ tenant_id: viewer.tenantId, a_plus: 90, a: 80, b: 65, c: 50, d: 30 }),
  );
  expect((await call('GET', '/security/overview', undefined, viewer.token)).body.overall_grade).toBe('B');
});

test('a viewer reads findings and the overview but may not report or move them (403)', async () => {
  const { id } = (await report({ fingerprint: `viewer-${run}` })).body;
  const token = viewerA.token;
  expect((await call('GET', '/security/findings', undefined, token)).status).toBe(200);
  expect((await call('GET', `/security/findings/${id}`, undefined, token)).status).toBe(200);
  expect((await call('GET', '/security/overview', undefined, token)).status).toBe(200);
  expect((await report({}, token)).status).toBe(403);
  expect((await call('PATCH', `/security/findings/${id}`, { status: 'resolved' }, token)).status).toBe(403);
});

test('another tenant sees none of the findings: 404 on each one, an empty list, a zero overview', async () => {
  const { id } = (await report({ fingerprint: `isolated-${run}` })).body;
  const token = editorB.token;
  expect((await call('GET', `/security/findings/${id}`, undefined, token)).status).toBe(404);
  expect((await call('PATCH', `/security/findings/${id}`, { status: 'resolved' }, token)).status).toBe(404);
  expect((await call('GET', `/security/findings?entity_id=${checkout}`, undefined, token)).body).toEqual({
    findings: [],
    pagination: { total: 0, nextCursor: null },
  });
  expect((await call('GET', '/security/overview', undefined, token)).body).toEqual({
    overall_grade: null,
    total_entities: 0,
    by_grade: { 'A+': 0, A: 0, B: 0, C: 0, D: 0, F: 0, ungraded: 0 },
    findings_summary: { critical: 0, high: 0, medium: 0, low: 0, info: 0 },
  });
  expect((await call('GET', `/security/findings/${id}`)).body.status).toBe('open');
});
