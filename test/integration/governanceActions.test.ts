import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { seedEntity } from '../support/clusterFixtures';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from '../support/harness';

// Governance actions over real HTTP: create, read, every list filter and the conflicting-filter
// 400, limit/offset/cursor, PATCH moves, bulk updates skipping final actions, soft delete, the
// dashboard, documentation coverage, audit entries in the entity's /activity, who may call, and
// tenant isolation.

const run = randomUUID().slice(0, 8);
let api: TestApi;
let editorA: { token: string; tenantId: string };
let viewerA: { token: string; tenantId: string };
let editorB: { token: string; tenantId: string };
let checkout: string;
let billing: string;
const ids: Record<string, string> = {};

const call = (method: string, path: string, body?: unknown, token = editorA.token): Promise<Reply> =>
  callApi(api, token, method, path, body);
const titles = (res: Reply) => (res.body.actions as { title: string }[]).map((a) => a.title).sort();

async function create(body: Record<string, unknown>, token = editorA.token): Promise<string> {
  const res = await call('POST', '/governance/actions', { type: 'documentation', priority: 'medium', ...body }, token);
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  api = await startApi();
  editorA = await sessionToken({ tenant: `gov-a-${run}`, email: 'editor@a.test', roles: ['editor'] });
  viewerA = await sessionToken({ tenant: `gov-a-${run}`, email: 'viewer@a.test', roles: ['viewer'] });
  editorB = await sessionToken({ tenant: `gov-b-${run}`, email: 'editor@b.test', roles: ['editor'] });
  checkout = await seedEntity(api.deps.db, editorA.tenantId, 'checkout', 'payments');
  billing = await seedEntity(api.deps.db, editorA.tenantId, 'billing', 'payments');
  // One action per case the filters tell apart.
  ids.open = await create({ title: 'open', entity_id: checkout, assigned_to: 'payments', priority: 'high' });
  ids.overdue = await create({ title: 'overdue', entity_id: checkout, due_date: '2020-01-01', type: 'security' });
  ids.future = await create({ title: 'future', entity_id: billing, due_date: '2999-12-31', priority: 'low' });
  ids.progress = await create({ title: 'in progress', assigned_to: 'platform', due_date: '2020-06-01' });
  ids.resolved = await create({ title: 'resolved', entity_id: billing, due_date: '2020-01-01' });
  ids.dismissed = await create({ title: 'dismissed', priority: 'critical' });
  expect((await call('PATCH', `/governance/actions/${ids.progress}`, { status: 'in_progress' })).status).toBe(200);
  for (const [id, status] of [
    [ids.resolved, 'resolved'],
    [ids.dismissed, 'dismissed'],
  ]) {
    expect((await call('PATCH', `/governance/actions/${id}`, { status, resolution_notes: 'done' })).status).toBe(200);
  }
});
afterAll(() => api.close());

test('create answers 201 with the action: open, created_by the caller, entity_name joined; read gives it back', async () => {
  const res = await call('POST', '/governance/actions', {
    title: 'Write a runbook',
    type: 'documentation',
    priority: 'high',
    description: 'For on-call',
    entity_id: checkout,
    assigned_to: 'payments',
    due_date: '2030-05-01',
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({
    title: 'Write a runbook',
    status: 'open',
    priority: 'high',
    entity_id: checkout,
    entity_name: 'checkout',
    created_by: 'editor@a.test',
    due_date: '2030-05-01',
    source_type: 'manual',
    resolution_notes: null,
  });
  expect((await call('GET', `/governance/actions/${res.body.id}`)).body).toEqual(res.body);
  await call('DELETE', `/governance/actions/${res.body.id}`);
});

test('create refuses an unknown entity, a missing field, an unknown field and a bad date with 400', async () => {
  for (const body of [
    { title: 't', type: 'x', priority: 'low', entity_id: randomUUID() },
    { title: 't', type: 'x' },
    { title: 't', type: 'x', priority: 'low', status: 'resolved' },
    { title: 't', type: 'x', priority: 'low', due_date: '2030-02-30' },
    { title: 't', type: 'x', priority: 'urgent' },
  ]) {
    expect((await call('POST', '/governance/actions', body)).status).toBe(400);
  }
});

test.each([
  ['status=open', ['open', 'overdue', 'future']],
  ['status=in_progress', ['in progress']],
  ['priority=high', ['open']],
  ['type=security', ['overdue']],
  ['assigned_to=platform', ['in progress']],
  ['source_type=manual', ['dismissed', 'future', 'in progress', 'open', 'overdue', 'resolved']],
  ['source_type=finding', []],
  ['overdue=true', ['in progress', 'overdue']],
  ['overdue=false', ['dismissed', 'future', 'open', 'resolved']],
  ['closed=true', ['dismissed', 'resolved']],
  ['closed=false', ['future', 'in progress', 'open', 'overdue']],
  ['actionable=true', ['future', 'in progress', 'open', 'overdue']],
  ['actionable=false', ['dismissed', 'resolved']],
  ['closed=true&priority=critical', ['dismissed']],
  ['closed=true&status=resolved', ['resolved']],
  ['overdue=true&assigned_to=platform', ['in progress']],
])('the filter %s lists exactly its actions', async (filter, expected) => {
  const res = await call('GET', `/governance/actions?${filter}`);
  expect(res.status).toBe(200);
  expect(titles(res)).toEqual([...expected].sort());
  expect(res.body.total).toBe(expected.length);
});

test('the entity_id filter and the entity’s own list give the entity’s actions; an unknown entity is a 404', async () => {
  expect(titles(await call('GET', `/governance/actions?entity_id=${checkout}`))).toEqual(['open', 'overdue']);
  const own = await call('GET', '/entities/billing/governance/actions?closed=false');
  expect(titles(own)).toEqual(['future']);
  expect(titles(await call('GET', `/entities/${billing}/governance/actions`))).toEqual(['future', 'resolved']);
  expect((await call('GET', '/entities/nope/governance/actions')).status).toBe(404);
});

test.each([
  ['closed=true&status=open', ['closed', 'status']],
  ['closed=true&status=in_progress', ['closed', 'status']],
  ['closed=true&actionable=true', ['closed', 'actionable']],
  ['closed=true&overdue=true', ['closed', 'overdue']],
])('closed=true with a filter matching only active actions (%s) is a 400 naming both', async (filter, fields) => {
  for (const path of ['/governance/actions', '/entities/checkout/governance/actions']) {
    const res = await call('GET', `${path}?${filter}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(
      fields.map((field) => `query.${field}`).sort(),
    );
  }
});

test('summary counts the filtered set: open, in_progress and overdue', async () => {
  expect((await call('GET', '/governance/actions')).body.summary).toEqual({ open: 3, in_progress: 1, overdue: 2 });
  expect((await call('GET', '/governance/actions?priority=medium')).body.summary).toEqual({
    open: 1,
    in_progress: 1,
    overdue: 2,
  });
});

test('limit/offset pages the list newest first, and a cursor is the stringified offset of the next page', async () => {
  const all = (await call('GET', '/governance/actions')).body;
  expect(all).toMatchObject({ total: 6, limit: 50, offset: 0, next_cursor: null });
  const first = (await call('GET', '/governance/actions?limit=4')).body;
  expect(first.actions.map((a: { id: string }) => a.id)).toEqual(
    all.actions.slice(0, 4).map((a: { id: string }) => a.id),
  );
  expect(first).toMatchObject({ total: 6, next_cursor: '4' });
  const byOffset = (await call('GET', '/governance/actions?limit=4&offset=4')).body;
  const byCursor = (await call('GET', `/governance/actions?limit=4&cursor=${first.next_cursor}`)).body;
  expect(byCursor).toEqual(byOffset);
  expect(byCursor.actions.map((a: { id: string }) => a.id)).toEqual(
    all.actions.slice(4).map((a: { id: string }) => a.id),
  );
  expect(byCursor).toMatchObject({ offset: 4, next_cursor: null });
  expect((await call('GET', '/governance/actions?offset=100')).body).toMatchObject({ actions: [], total: 6 });
});

test.each([
  'limit=0',
  'limit=201',
  'limit=abc',
  'offset=-1',
  'cursor=abc',
  'cursor=-4',
  'overdue=maybe',
  'status=closed',
  'entity_id=checkout',
  `entity_id=urn:uuid:${randomUUID()}`,
])('a bad paging or filter value (%s) is a 400', async (query) => {
  expect((await call('GET', `/governance/actions?${query}`)).status).toBe(400);
});

test('PATCH moves a non-final action to any status; a final one reopens, but never moves to another final status (409)', async () => {
  const id = await create({ title: 'moves' });
  const patch = (body: Record<string, unknown>) => call('PATCH', `/governance/actions/${id}`, body);
  expect((await patch({ status: 'wont_fix' })).body.status).toBe('wont_fix');
  const refused = await patch({ status: 'resolved' });
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toMatch(/wont_fix.*reopen/);
  expect((await patch({ resolution_notes: 'kept', priority: 'low' })).body).toMatchObject({
    status: 'wont_fix',
    resolution_notes: 'kept',
    priority: 'low',
  });
  expect((await patch({ status: 'open' })).body.status).toBe('open');
  expect((await patch({ status: 'resolved', assigned_to: null, due_date: null })).body).toMatchObject({
    status: 'resolved',
    assigned_to: null,
    due_date: null,
  });
  expect((await call('PATCH', `/governance/actions/${randomUUID()}`, { status: 'open' })).status).toBe(404);
  expect((await call('GET', `/governance/actions/urn:uuid:${id}`)).status).toBe(400);
  await call('DELETE', `/governance/actions/${id}`);
});

test('bulk sets the status of the listed actions, skipping final, unknown, deleted and other tenants’ ones', async () => {
  const a = await create({ title: 'bulk a' });
  const b = await create({ title: 'bulk b' });
  const final = await create({ title: 'bulk final' });
  const deleted = await create({ title: 'bulk deleted' });
  const other = await create({ title: 'bulk other tenant' }, editorB.token);
  await call('PATCH', `/governance/actions/${final}`, { status: 'dismissed' });
  await call('DELETE', `/governance/actions/${deleted}`);
  const res = await call('POST', '/governance/actions/bulk', {
    ids: [a, b, final, deleted, other, randomUUID()],
    status: 'resolved',
  });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ requested: 6, updated: 2 });
  expect((await call('GET', `/governance/actions/${a}`)).body.status).toBe('resolved');
  expect((await call('GET', `/governance/actions/${final}`)).body.status).toBe('dismissed');
  expect((await call('GET', `/governance/actions/${other}`, undefined, editorB.token)).body.status).toBe('open');
  for (const id of [a, b, final]) await call('DELETE', `/governance/actions/${id}`);
});

test('bulk refuses more than 200 ids, duplicates, non-uuids and an unknown status with 400', async () => {
  const many = Array.from({ length: 201 }, () => randomUUID());
  for (const body of [
    { ids: many, status: 'resolved' },
    { ids: [ids.open, ids.open], status: 'resolved' },
    { ids: ['nope'], status: 'resolved' },
    { ids: [], status: 'resolved' },
    { ids: [ids.open], status: 'done' },
  ]) {
    expect((await call('POST', '/governance/actions/bulk', body)).status).toBe(400);
  }
});

test('a soft-deleted action leaves reads, lists and counts but stays in the table; a second delete is a 404', async () => {
  const id = await create({ title: 'to delete', entity_id: billing, priority: 'critical' });
  const before = (await call('GET', '/governance/dashboard')).body;
  expect((await call('DELETE', `/governance/actions/${id}`)).status).toBe(204);
  expect((await call('GET', `/governance/actions/${id}`)).status).toBe(404);
  expect((await call('PATCH', `/governance/actions/${id}`, { status: 'resolved' })).status).toBe(404);
  expect((await call('DELETE', `/governance/actions/${id}`)).status).toBe(404);
  expect(titles(await call('GET', '/governance/actions'))).not.toContain('to delete');
  expect(titles(await call('GET', '/entities/billing/governance/actions'))).not.toContain('to delete');
  const after = (await call('GET', '/governance/dashboard')).body;
  expect(after.total_actions).toBe(before.total_actions - 1);
  expect(after.by_priority.critical).toBe(before.by_priority.critical - 1);
  const row = await withTenant(api.deps.db, editorA.tenantId, (trx) => trx('governance_actions').where({ id }).first());
  expect(row.deleted_at).not.toBeNull();
});

test('the dashboard counts the live actions by status and priority, with the overdue and unassigned ones', async () => {
  const res = await call('GET', '/governance/dashboard', undefined, viewerA.token);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    total_actions: 6,
    by_status: { open: 3, in_progress: 1, resolved: 1, dismissed: 1, wont_fix: 0 },
    by_priority: { critical: 1, high: 1, medium: 3, low: 1 },
    overdue: 2,
    unassigned: 2,
  });
});

test('documentation coverage counts entities with a README or a crawled repository, and freshness buckets them by their last change', async () => {
  const db = api.deps.db;
  const tenantId = editorA.tenantId;
  const documented = await seedEntity(db, tenantId, 'documented', 'payments');
  const old = await seedEntity(db, tenantId, 'old-docs', 'payments');
  const linked = await seedEntity(db, tenantId, 'linked', 'payments');
  const uncrawled = await seedEntity(db, tenantId, 'uncrawled', 'payments');
  const repoUrl = (name: string) => `https://vcs.test/acme/${name}`;
  await withTenant(db, tenantId, async (trx) => {
    await trx('entities').where({ id: documented }).update({ readme: '# Hi', readme_format: 'markdown' });
    await trx('entities')
      .where({ id: old })
      .update({ readme: '# Old', readme_format: 'markdown', updated_at: trx.raw(`now() - interval '45 days'`) });
    const link = (name: string) => JSON.stringify([{ title: 'Repository', url: repoUrl(name) }]);
    await trx('entities')
      .where({ id: linked })
      .update({ links: link('linked'), updated_at: trx.raw(`now() - interval '120 days'`) });
    await trx('entities')
      .where({ id: uncrawled })
      .update({ links: link('uncrawled') });
    const [integration] = await trx('integrations')
      .insert({ tenant_id: tenantId, name: 'vcs', type: 'vcs-host-a' })
      .returning('id');
    await trx('repositories').insert(
      (['linked', 'uncrawled'] as const).map((name) => ({
        tenant_id: tenantId,
        integration_id: integration.id,
        provider: 'vcs-host-a',
        full_name: `acme/${name}`,
        owner: 'acme',
        name,
        html_url: repoUrl(name),
        crawl_status: name === 'linked' ? 'crawled' : 'pending',
      })),
    );
  });
  const res = await call('GET', '/governance/documentation', undefined, viewerA.token);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    total_entities: 6,
    documented: 3,
    undocumented: 3,
    coverage_percent: 50,
    with_readme: 2,
    with_repository_docs: 1,
    freshness: { fresh: 1, aging: 1, stale: 1 },
  });
  await withTenant(db, tenantId, async (trx) => {
    await trx('entities').whereIn('id', [documented, old, linked, uncrawled]).delete();
    await trx('integrations').delete();
  });
});

test('every change of an action with an entity shows in the entity’s /activity', async () => {
  const entity = await seedEntity(api.deps.db, editorA.tenantId, `audited-${run}`);
  const id = await create({ title: 'audited', entity_id: entity });
  await call('PATCH', `/governance/actions/${id}`, { status: 'in_progress' });
  await call('POST', '/governance/actions/bulk', { ids: [id], status: 'resolved' });
  await call('DELETE', `/governance/actions/${id}`);
  const activity = await call('GET', `/entities/${entity}/activity`);
  expect(activity.body.items.map((item: { eventType: string }) => item.eventType).reverse()).toEqual([
    'governance_action.created',
    'governance_action.updated',
    'governance_action.updated',
    'governance_action.deleted',
  ]);
  expect(activity.body.items.every((item: { actor: string }) => item.actor === 'editor@a.test')).toBe(true);
  await withTenant(api.deps.db, editorA.tenantId, (trx) => trx('entities').where({ id: entity }).delete());
});

test('a viewer reads but may not create, change, bulk-update or delete actions (403)', async () => {
  const token = viewerA.token;
  expect((await call('GET', '/governance/actions', undefined, token)).status).toBe(200);
  expect((await call('POST', '/governance/actions', { title: 't', type: 't', priority: 'low' }, token)).status).toBe(
    403,
  );
  expect((await call('PATCH', `/governance/actions/${ids.open}`, { status: 'resolved' }, token)).status).toBe(403);
  expect((await call('POST', '/governance/actions/bulk', { ids: [ids.open], status: 'resolved' }, token)).status).toBe(
    403,
  );
  expect((await call('DELETE', `/governance/actions/${ids.open}`, undefined, token)).status).toBe(403);
});

test('another tenant sees none of the actions: 404 on each one, empty lists, zero counts, an unknown entity', async () => {
  const token = editorB.token;
  expect((await call('GET', `/governance/actions/${ids.open}`, undefined, token)).status).toBe(404);
  expect((await call('PATCH', `/governance/actions/${ids.open}`, { status: 'resolved' }, token)).status).toBe(404);
  expect((await call('DELETE', `/governance/actions/${ids.open}`, undefined, token)).status).toBe(404);
  expect((await call('GET', `/governance/actions?entity_id=${checkout}`, undefined, token)).body).toMatchObject({
    actions: [],
    total: 0,
    summary: { open: 0, in_progress: 0, overdue: 0 },
  });
  expect((await call('GET', `/entities/${checkout}/governance/actions`, undefined, token)).status).toBe(404);
  expect(
    (await call('POST', '/governance/actions', { title: 't', type: 't', priority: 'low', entity_id: checkout }, token))
      .status,
  ).toBe(400);
  const dashboard = (await call('GET', '/governance/dashboard', undefined, token)).body;
  expect(dashboard.total_actions).toBe(1); // its own, from the bulk test
  expect((await call('GET', '/governance/documentation', undefined, token)).body.total_entities).toBe(0);
  expect((await call('GET', `/governance/actions/${ids.open}`)).body.status).toBe('open');
});
