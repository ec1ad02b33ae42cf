import { randomUUID } from 'node:crypto';
import { callApi, sessionToken, startApi, type TestApi } from '../support/harness';

// Integrations over real HTTP: typed config rules, write-only secrets, permissions, audit
// entries and tenant isolation. (Their use by forge actions is in forge.test.ts.)

const run = randomUUID().slice(0, 8);
let api: TestApi;
let admin: string;
let viewer: string;
let otherTenant: string;
beforeAll(async () => {
  api = await startApi();
  admin = (await sessionToken({ tenant: `integrations-${run}`, email: 'admin@int.test', roles: ['admin'] })).token;
  viewer = (await sessionToken({ tenant: `integrations-${run}`, email: 'viewer@int.test', roles: ['viewer'] })).token;
  otherTenant = (await sessionToken({ tenant: `integrations-other-${run}`, email: 'admin@other.test', roles: ['admin'] })).token;
});
afterAll(() => api.close());

const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);
const sourceHost = { name: 'source host', type: 'vcs-host-a', config: { base_url: 'https://vcs.example.test/api', token: 'tok-secret', organization: 'acme' } };

test('a vcs-host-a config needs base_url and token; unknown types and fields are 400s with details', async () => {
  const missing = await call(admin, 'POST', '/integrations', { name: 'x', type: 'vcs-host-a', config: { base_url: 'ftp://nope' } });
  expect(missing.status).toBe(400);
  expect(missing.body.error.details.map((d: { field: string }) => d.field)).toEqual(
    expect.arrayContaining(['body.config.token', 'body.config.base_url']),
  );
  const badType = await call(admin, 'POST', '/integrations', { name: 'x', type: 'pager', config: {} });
  expect(badType.status).toBe(400);
  expect((await call(admin, 'POST', '/integrations', { name: 'x', type: 'custom', config: {}, extra: 1 })).status).toBe(400);
  // Types without config rules take any object.
  expect((await call(admin, 'POST', '/integrations', { name: 'hooks', type: 'custom', config: { anything: true } })).status).toBe(201);
});

test('secret config values are stored but never returned; an update without them keeps them', async () => {
  const created = await call(admin, 'POST', '/integrations', sourceHost);
  expect(created.status).toBe(201);
  expect(created.body).toEqual(
    expect.objectContaining({ type: 'vcs-host-a', status: 'active', config: { base_url: 'https://vcs.example.test/api', organization: 'acme' }, secrets: ['token'], last_sync: null }),
  );
  const listed = await call(admin, 'GET', '/integrations');
  expect(JSON.stringify(listed.body)).not.toContain('tok-secret');
  expect(listed.body.integrations.map((i: { id: string }) => i.id)).toContain(created.body.id);

  const renamed = await call(admin, 'PUT', `/integrations/${created.body.id}`, { name: 'renamed', status: 'inactive', config: { base_url: 'https://vcs2.example.test' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body).toEqual(expect.objectContaining({ name: 'renamed', status: 'inactive', config: { base_url: 'https://vcs2.example.test' }, secrets: ['token'] }));
  // A replacement config is still checked against its type's rules.
  const broken = await call(admin, 'PUT', `/integrations/${created.body.id}`, { config: { organization: 'acme' } });
  expect(broken.status).toBe(400);
  expect(broken.body.error.details).toEqual([expect.objectContaining({ field: 'body.config.base_url' })]);
  expect((await call(admin, 'GET', `/integrations/${created.body.id}`)).body.config).toEqual({ base_url: 'https://vcs2.example.test' });
});

test('reading needs admin:read, changing needs admin:write; every change is audited', async () => {
  expect((await call(viewer, 'GET', '/integrations')).status).toBe(403);
  expect((await call(viewer, 'POST', '/integrations', sourceHost)).status).toBe(403);
  const { body: created } = await call(admin, 'POST', '/integrations', sourceHost);
  await call(admin, 'PUT', `/integrations/${created.id}`, { name: 'changed' });
  expect((await call(admin, 'DELETE', `/integrations/${created.id}`)).status).toBe(204);
  expect((await call(admin, 'GET', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(admin, 'DELETE', `/integrations/${created.id}`)).status).toBe(404);
  const { items } = (await call(admin, 'GET', '/admin/activity?limit=100')).body;
  const events = items.filter((i: { targetId?: string }) => i.targetId === created.id).map((i: { eventType: string }) => i.eventType);
  expect(events).toEqual(['integration.deleted', 'integration.updated', 'integration.created']);
});

test("another tenant gets 404 for every call on an integration, and an empty list", async () => {
  const { body: created } = await call(admin, 'POST', '/integrations', sourceHost);
  expect((await call(otherTenant, 'GET', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(otherTenant, 'PUT', `/integrations/${created.id}`, { name: 'mine' })).status).toBe(404);
  expect((await call(otherTenant, 'DELETE', `/integrations/${created.id}`)).status).toBe(404);
  expect((await call(otherTenant, 'GET', '/integrations')).body.integrations).toEqual([]);
  expect((await call(admin, 'GET', `/integrations/${created.id}`)).body.name).toBe('source host');
});
