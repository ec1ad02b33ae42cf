import { callApi, startApi, type TestApi } from '../support/harness';
import { adminTenant, auditEntries, type AdminTenant } from '../support/adminSuite';

// /admin/settings over HTTP: a free-form object per tenant, its size limit, the audit entry of
// a change (keys, never values), access and tenant isolation.

let api: TestApi;
let a: AdminTenant;
let b: AdminTenant;
const call = (token: string, method: string, path: string, body?: unknown) => callApi(api, token, method, path, body);

beforeAll(async () => {
  api = await startApi();
  [a, b] = await Promise.all([adminTenant('settings-a'), adminTenant('settings-b')]);
});
afterAll(() => api?.close());

test('settings start as {} and a PUT replaces them with any JSON object, read back as written', async () => {
  expect(await call(a.admin, 'GET', '/admin/settings')).toEqual({ status: 200, body: {} });
  const settings = { theme: { color: 'teal' }, flags: [1, 'two', null], on: true };
  expect(await call(a.admin, 'PUT', '/admin/settings', settings)).toEqual({ status: 200, body: settings });
  expect(await call(a.admin, 'GET', '/admin/settings')).toEqual({ status: 200, body: settings });
});

test('a change is audited with the top-level keys added, removed and changed, never their values', async () => {
  const t = await adminTenant('settings-audit');
  await call(t.admin, 'PUT', '/admin/settings', { keep: 1, change: 'old', drop: 'x' });
  await call(t.admin, 'PUT', '/admin/settings', { keep: 1, change: 'new-secret-value', add: 'token-123' });
  const entries = await auditEntries(api.deps.db, t.tenantId, 'settings.updated');
  expect(entries.map((e) => e.metadata)).toEqual([
    { added: ['keep', 'change', 'drop'], removed: [], changed: [] },
    { added: ['add'], removed: ['drop'], changed: ['change'] },
  ]);
  expect(JSON.stringify(entries)).not.toContain('new-secret-value');
  expect(JSON.stringify(entries)).not.toContain('token-123');
});

test('settings over 64 KiB of JSON are a 413 naming the limit, and nothing changes', async () => {
  const t = await adminTenant('settings-big');
  await call(t.admin, 'PUT', '/admin/settings', { small: true });
  const res = await call(t.admin, 'PUT', '/admin/settings', { blob: 'x'.repeat(70_000) });
  expect(res.status).toBe(413);
  expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  expect(res.body.error.message).toContain('SHIPYARD_SETTINGS_MAX_BYTES');
  expect(res.body.error.message).toContain(String(64 * 1024));
  expect((await call(t.admin, 'GET', '/admin/settings')).body).toEqual({ small: true });
});

test('a body that is not an object (array, string) is a 400', async () => {
  expect((await call(a.admin, 'PUT', '/admin/settings', [1, 2])).status).toBe(400);
  expect((await call(a.admin, 'PUT', '/admin/settings', 'text')).status).toBe(400);
});

test('a viewer may not read or write settings; an editor may not write them', async () => {
  expect((await call(a.viewer, 'GET', '/admin/settings')).status).toBe(403);
  expect((await call(a.editor, 'PUT', '/admin/settings', {})).status).toBe(403);
});

test("another tenant's settings are its own: B neither reads nor overwrites A's", async () => {
  await call(a.admin, 'PUT', '/admin/settings', { owner: 'a' });
  expect((await call(b.admin, 'GET', '/admin/settings')).body).toEqual({});
  await call(b.admin, 'PUT', '/admin/settings', { owner: 'b' });
  expect((await call(a.admin, 'GET', '/admin/settings')).body).toEqual({ owner: 'a' });
});
