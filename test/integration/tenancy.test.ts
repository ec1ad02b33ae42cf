import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createPool } from '../../db/pool';
import { commitWithoutFlush, tenantIsolationSql, withTenant } from '../../db/tenancy';
import { testConfig } from '../support/harness';

// Proves the tenancy mechanism at the database level, as the roles the services really use.
const config = testConfig();
const app = createPool(config.database.appUrl, 2);
const owner = createPool(config.database.ownerUrl, 1);
const system = createPool(config.database.systemUrl, 1);
const scratch = `rls_probe_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const tenantA = randomUUID();
const tenantB = randomUUID();

async function createTenant(id: string) {
  // A tenant row is written inside its own context: the policy's WITH CHECK allows exactly that.
  await withTenant(app, id, (trx) => trx('tenants').insert({ id, slug: `t-${id.slice(0, 8)}`, name: `Tenant ${id}` }));
}

beforeAll(async () => {
  // A tenant table built the way every migration builds one.
  await owner.raw(`create table ${scratch} (id serial primary key, tenant_id uuid not null, note text not null)`);
  await owner.raw(tenantIsolationSql(scratch));
  await createTenant(tenantA);
  await createTenant(tenantB);
  await withTenant(app, tenantA, (trx) => trx(scratch).insert({ tenant_id: tenantA, note: 'a-secret' }));
});

afterAll(async () => {
  await owner.raw(`drop table if exists ${scratch}`);
  await Promise.all([app.destroy(), owner.destroy(), system.destroy()]);
});

const asB = <T>(work: (trx: Knex.Transaction) => Promise<T>) => withTenant(app, tenantB, work);

test('the app role is neither superuser nor BYPASSRLS, and owns no table', async () => {
  const { rows } = await app.raw(
    `select r.rolsuper, r.rolbypassrls, (select count(*) from pg_tables where tableowner = current_user)::int as owned
       from pg_roles r where r.rolname = current_user`,
  );
  expect(rows[0]).toEqual({ rolsuper: false, rolbypassrls: false, owned: 0 });
});

test('every table with a tenant_id column has RLS enabled, forced, and a policy', async () => {
  const { rows } = await owner.raw(`
    select c.relname, c.relrowsecurity, c.relforcerowsecurity,
           exists (select 1 from pg_policies p where p.tablename = c.relname) as has_policy
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind = 'r'
       and (exists (select 1 from information_schema.columns col
                    where col.table_name = c.relname and col.column_name = 'tenant_id')
            or c.relname = 'tenants')`);
  expect(rows.length).toBeGreaterThanOrEqual(2);
  for (const row of rows) {
    expect({
      table: row.relname,
      rls: row.relrowsecurity,
      forced: row.relforcerowsecurity,
      policy: row.has_policy,
    }).toEqual({
      table: row.relname,
      rls: true,
      forced: true,
      policy: true,
    });
  }
});

test("another tenant cannot read, update or delete a tenant's rows", async () => {
  expect(await asB((trx) => trx(scratch).select())).toEqual([]);
  expect(await asB((trx) => trx(scratch).update({ note: 'stolen' }))).toBe(0);
  expect(await asB((trx) => trx(scratch).delete())).toBe(0);
  const stillThere = await withTenant(app, tenantA, (trx) => trx(scratch).select('note'));
  expect(stillThere).toEqual([{ note: 'a-secret' }]);
});

test("a tenant cannot write a row into another tenant's data", async () => {
  await expect(asB((trx) => trx(scratch).insert({ tenant_id: tenantA, note: 'planted' }))).rejects.toThrow(
    /row-level security/,
  );
});

test('a session without tenant context sees nothing', async () => {
  expect(await app(scratch).select()).toEqual([]);
  expect(await app('tenants').select()).toEqual([]);
});

test('a tenant sees its own tenant row only', async () => {
  const rows = await asB((trx) => trx('tenants').select('id'));
  expect(rows).toEqual([{ id: tenantB }]);
});

test('the tenant context ends with its transaction, so a pooled connection does not carry it', async () => {
  await withTenant(app, tenantA, (trx) => trx(scratch).select());
  const { rows } = await app.raw("select current_setting('app.tenant_id', true) as tenant");
  expect(rows[0].tenant === null || rows[0].tenant === '').toBe(true);
});

test('the system role reads across tenants (for backfill)', async () => {
  const rows = await system('tenants').whereIn('id', [tenantA, tenantB]).select('id');
  expect(rows).toHaveLength(2);
});

test('BEGIN, the tenant setting and the precondition go as one statement: a tenant transaction costs no extra round trip', async () => {
  const sent: string[] = [];
  const record = (query: { sql: string }) => sent.push(query.sql);
  app.on('query', record);
  try {
    await withTenant(app, tenantA, (trx) => trx(scratch).select('note'), 'select 1');
  } finally {
    app.off('query', record);
  }
  expect(sent).toEqual([
    `begin; set local app.tenant_id = '${tenantA}'; select 1`,
    `select "note" from "${scratch}"`,
    'COMMIT;',
  ]);
});

test('a precondition that fails fails the transaction with its error, before the work runs', async () => {
  let ran = false;
  await expect(
    withTenant(
      app,
      tenantA,
      async () => {
        ran = true;
      },
      "do $$ begin raise exception 'precondition failed'; end $$",
    ),
  ).rejects.toThrow(/precondition failed/);
  expect(ran).toBe(false);
});

test('a tenant id is sent as an escaped literal: quotes in it cannot end the statement', async () => {
  const hostile = "x', true); drop table tenants; --";
  const setting = await withTenant(app, hostile, async (trx) => {
    const { rows } = await trx.raw("select current_setting('app.tenant_id') as tenant");
    return rows[0].tenant;
  });
  expect(setting).toBe(hostile);
  expect(await asB((trx) => trx('tenants').select('id'))).toEqual([{ id: tenantB }]);
});

test("a failed transaction's writes are rolled back, and its connection serves the next one", async () => {
  await expect(
    withTenant(app, tenantA, async (trx) => {
      await trx(scratch).insert({ tenant_id: tenantA, note: 'rolled-back' });
      throw new Error('the work failed');
    }),
  ).rejects.toThrow('the work failed');
  // The pool has two connections: three more transactions reuse the one that failed.
  for (let i = 0; i < 3; i++) {
    expect(await withTenant(app, tenantA, (trx) => trx(scratch).pluck('note'))).toEqual(['a-secret']);
  }
});

test('a nested transaction is a savepoint: rolling it back keeps the outer work', async () => {
  const notes = await withTenant(app, tenantA, async (trx) => {
    await trx(scratch).insert({ tenant_id: tenantA, note: 'outer' });
    await expect(
      trx.transaction(async (inner) => {
        await inner(scratch).insert({ tenant_id: tenantA, note: 'inner' });
        throw new Error('inner failed');
      }),
    ).rejects.toThrow('inner failed');
    const seen = await trx(scratch).orderBy('note').pluck('note');
    throw Object.assign(new Error('undo the outer write too'), { seen });
  }).catch((err: { seen: string[] }) => err.seen);
  expect(notes).toEqual(['a-secret', 'outer']);
  expect(await withTenant(app, tenantA, (trx) => trx(scratch).pluck('note'))).toEqual(['a-secret']);
});

test('a query left running after its transaction ended is refused, not run in the next one', async () => {
  let stray: Promise<unknown> | undefined;
  await withTenant(app, tenantA, async (trx) => {
    await trx(scratch).select();
    // Not awaited: starts only once the transaction has committed.
    stray = new Promise((resolve) => setTimeout(resolve, 50)).then(() => trx(scratch).select('note'));
  });
  await expect(stray).rejects.toThrow(/after its tenant transaction ended/);
});

test("executionPromise settles with the transaction: the work's result on commit, its error on rollback", async () => {
  let committed: Promise<unknown> | undefined;
  await withTenant(app, tenantA, async (trx) => {
    committed = trx.executionPromise;
    return 'done';
  });
  await expect(committed).resolves.toBe('done');
  let rolledBack: Promise<unknown> | undefined;
  await withTenant(app, tenantA, async (trx) => {
    rolledBack = trx.executionPromise;
    throw new Error('nope');
  }).catch(() => {});
  await expect(rolledBack).rejects.toThrow('nope');
});

test('commitWithoutFlush relaxes only its own transaction: the next one on the pool commits synchronously again', async () => {
  const setting = async (trx: Knex) => (await trx.raw('show synchronous_commit')).rows[0].synchronous_commit;
  const before = await withTenant(app, tenantA, setting);
  const inside = await withTenant(app, tenantA, async (trx) => {
    await commitWithoutFlush(trx);
    await trx(scratch).insert({ tenant_id: tenantA, note: 'unflushed' });
    return setting(trx);
  });
  // Both pool connections, so whichever carried the relaxed transaction is read after it.
  const after = await Promise.all([withTenant(app, tenantA, setting), withTenant(app, tenantA, setting)]);
  expect([before, inside, after]).toEqual(['on', 'off', ['on', 'on']]);
  expect(await withTenant(app, tenantA, (trx) => trx(scratch).where({ note: 'unflushed' }).pluck('note'))).toEqual([
    'unflushed',
  ]);
});

test('a transaction whose work swallowed a failed statement is reported rolled back, not committed', async () => {
  await expect(
    withTenant(app, tenantA, async (trx) => {
      await trx(scratch).insert({ tenant_id: tenantA, note: 'swallowed-1' });
      await trx(scratch)
        .insert({ tenant_id: tenantA, note: null as unknown as string })
        .catch(() => {});
    }),
  ).rejects.toThrow(/rolled back/);
  expect(await withTenant(app, tenantA, (trx) => trx(scratch).where({ note: 'swallowed-1' }).pluck('note'))).toEqual(
    [],
  );
});
