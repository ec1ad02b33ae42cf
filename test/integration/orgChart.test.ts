import { randomUUID } from 'node:crypto';
import { callApi, startApi, type TestApi } from '../support/harness';
import { adminTenant, auditEntries, type AdminTenant } from '../support/adminSuite';

// The org chart and bulk parent changes over HTTP: the tree in depth-first order with member
// counts, many moves in one transaction (each team audited), a cycle anywhere refusing all of
// them with 409 naming its teams, unknown teams, limits, access and tenant isolation.

let api: TestApi;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api?.close());

/** Teams named by `names`, created as roots; their ids by name. */
async function teams(t: AdminTenant, names: string[]): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const name of names) {
    const res = await call(t.admin, 'POST', '/admin/teams', { name, slug: `${name}-${randomUUID().slice(0, 4)}` });
    expect(res.status).toBe(201);
    ids[name] = res.body.id;
  }
  return ids;
}

const chart = async (token: string) =>
  (await call(token, 'GET', '/teams/org-chart')).body.teams as {
    id: string;
    name: string;
    depth: number;
    member_count: number;
    children: string[];
    parent_id: string | null;
  }[];
const bulk = (t: AdminTenant, changes: { team_id: string; parent_id: string | null }[]) =>
  call(t.admin, 'POST', '/admin/teams/bulk-parent', { changes });

test('bulk parent moves many teams at once, audited per team; the org chart shows the tree depth-first with member counts', async () => {
  const t = await adminTenant('org');
  const id = await teams(t, ['eng', 'platform', 'web', 'sales', 'infra']);
  await call(t.admin, 'POST', `/admin/teams/${id.platform}/members`, { user_id: t.viewerId, role: 'member' });
  await call(t.admin, 'POST', `/admin/teams/${id.platform}/members`, { user_id: t.editorId, role: 'lead' });
  const res = await bulk(t, [
    { team_id: id.platform, parent_id: id.eng },
    { team_id: id.web, parent_id: id.eng },
    { team_id: id.infra, parent_id: id.platform },
  ]);
  expect(res).toEqual({ status: 200, body: { updated: 3 } });
  const tree = await chart(t.viewer);
  expect(tree.map((n) => [n.name, n.depth])).toEqual([
    ['eng', 0],
    ['platform', 1],
    ['infra', 2],
    ['web', 1],
    ['sales', 0],
  ]);
  expect(tree[0].children).toEqual([id.platform, id.web]);
  expect(tree[1]).toMatchObject({ parent_id: id.eng, member_count: 2, children: [id.infra] });
  const audits = (await auditEntries(api.deps.db, t.tenantId, 'team.updated')).filter((e) => e.metadata.bulk_parent);
  expect(audits.map((e) => e.target_id).sort()).toEqual([id.platform, id.web, id.infra].sort());

  // Back to the root, and a move to the parent it has already: only the first counts.
  expect(
    (
      await bulk(t, [
        { team_id: id.infra, parent_id: null },
        { team_id: id.web, parent_id: id.eng },
      ])
    ).body,
  ).toEqual({
    updated: 1,
  });
  expect((await chart(t.viewer)).find((n) => n.id === id.infra)).toMatchObject({ depth: 0, parent_id: null });
});

test('a cycle anywhere refuses the whole request with 409 naming its teams, and nothing moves', async () => {
  const t = await adminTenant('org-cycle');
  const id = await teams(t, ['a', 'b', 'c', 'd']);
  await bulk(t, [{ team_id: id.b, parent_id: id.a }]);
  const before = await chart(t.viewer);
  // d moves fine; a under c under b under a is a cycle.
  const res = await bulk(t, [
    { team_id: id.d, parent_id: id.a },
    { team_id: id.c, parent_id: id.b },
    { team_id: id.a, parent_id: id.c },
  ]);
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe('CONFLICT');
  for (const name of ['a', 'b', 'c']) expect(res.body.error.message).toContain(`${name}-`);
  expect(res.body.error.message).not.toContain('d-');
  expect(await chart(t.viewer)).toEqual(before);
  const self = await bulk(t, [{ team_id: id.d, parent_id: id.d }]);
  expect(self.status).toBe(409);
  const refused = (await auditEntries(api.deps.db, t.tenantId, 'team.updated')).filter((e) => e.status === 'failure');
  expect(refused).toHaveLength(2);
});

test('an unknown team or parent is a 404 naming it; a team twice, none or over 200 changes a 400', async () => {
  const t = await adminTenant('org-bad');
  const id = await teams(t, ['x']);
  const ghost = randomUUID();
  const missing = await bulk(t, [{ team_id: id.x, parent_id: ghost }]);
  expect(missing.status).toBe(404);
  expect(missing.body.error.message).toContain(ghost);
  expect((await bulk(t, [{ team_id: ghost, parent_id: null }])).status).toBe(404);
  const twice = await bulk(t, [
    { team_id: id.x, parent_id: null },
    { team_id: id.x, parent_id: null },
  ]);
  expect(twice.status).toBe(400);
  expect((await bulk(t, [])).status).toBe(400);
  const many = Array.from({ length: 201 }, () => ({ team_id: randomUUID(), parent_id: null }));
  expect((await bulk(t, many)).status).toBe(400);
});

test("only admin:write may bulk-move; another tenant's teams are unknown to it and absent from its chart", async () => {
  const [t, other] = await Promise.all([adminTenant('org-own'), adminTenant('org-other')]);
  const mine = await teams(t, ['mine']);
  const theirs = await teams(other, ['theirs']);
  expect(
    (await call(t.editor, 'POST', '/admin/teams/bulk-parent', { changes: [{ team_id: mine.mine, parent_id: null }] }))
      .status,
  ).toBe(403);
  expect((await bulk(t, [{ team_id: mine.mine, parent_id: theirs.theirs }])).status).toBe(404);
  expect((await bulk(t, [{ team_id: theirs.theirs, parent_id: mine.mine }])).status).toBe(404);
  expect((await chart(t.viewer)).map((n) => n.name)).toEqual(['mine']);
  expect((await chart(other.viewer)).map((n) => n.name)).toEqual(['theirs']);
});

test('org-chart is not a usable team slug, sent or derived from the name, so no team hides the route', async () => {
  const t = await adminTenant('org-slug');
  expect((await call(t.admin, 'POST', '/admin/teams', { name: 'Charts', slug: 'org-chart' })).status).toBe(400);
  expect((await call(t.admin, 'POST', '/admin/teams', { name: 'Org Chart' })).status).toBe(400);
  expect((await call(t.admin, 'GET', '/teams/org-chart')).body.teams).toEqual([]);
});
