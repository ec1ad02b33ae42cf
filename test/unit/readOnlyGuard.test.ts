import { blockedWhileReadOnly } from '../../api/http/route';
import { apiRoutes } from '../../api/routes';
import { ReadOnlyTenants } from '../../core/license/readOnlyTenants';

test('every write of a tenant caller is blocked while read-only, by declaration: only license activation and the manifest checks that store nothing are exempt', () => {
  const writes = apiRoutes.filter((route) => route.method !== 'GET' && route.access !== 'public');
  expect(writes.length).toBeGreaterThan(20);
  const exempt = writes.filter((route) => !blockedWhileReadOnly(route) && route.access !== 'agent');
  expect(exempt.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
    'POST /license/activate',
    'POST /manifests/analyze',
    'POST /manifests/convert',
    'POST /manifests/validate',
  ]);
  for (const route of apiRoutes.filter((r) => r.method === 'GET')) expect(blockedWhileReadOnly(route)).toBe(false);
});

describe('the per-tenant read-only cache', () => {
  const ended = { edition: 'beta' as const, beta_ends_at: new Date('2026-11-10T00:00:00Z') };
  const after = new Date('2026-11-11T00:00:00Z');

  test('loads a tenant once within its TTL and refuses a Beta tenant past its end with 423', async () => {
    const loads: string[] = [];
    const tenants = new ReadOnlyTenants(60_000, async (tenantId) => {
      loads.push(tenantId);
      return ended;
    });
    await expect(tenants.assertWritable('t1', after)).rejects.toMatchObject({
      status: 423,
      code: 'BETA_ENDED_READ_ONLY',
    });
    await expect(tenants.assertWritable('t1', after)).rejects.toMatchObject({ status: 423 });
    expect(loads).toEqual(['t1']);
  });

  test('a Beta end that passes while cached takes effect at once; a forgotten tenant is read again', async () => {
    let facts: { edition: 'beta' | 'free'; beta_ends_at: Date | null } = ended;
    const tenants = new ReadOnlyTenants(60_000, async () => facts);
    await expect(tenants.assertWritable('t1', new Date('2026-11-09T00:00:00Z'))).resolves.toBeUndefined();
    await expect(tenants.assertWritable('t1', after)).rejects.toMatchObject({ status: 423 });
    facts = { edition: 'free', beta_ends_at: null };
    tenants.forget('t1');
    await expect(tenants.assertWritable('t1', after)).resolves.toBeUndefined();
  });
});
