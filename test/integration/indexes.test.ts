import { createPool } from '../../db/pool';
import { testConfig } from '../support/harness';

// Every foreign key has an index whose leading columns are its own, so deleting a parent (a
// team, a mold, a user, a key) or joining to it never scans the child table across tenants.
// Keys to `tenants` are left out: a tenant is deleted rarely and offline, and indexing each
// table's tenant_id alone would only slow writes (hot paths have tenant-first indexes).
const system = createPool(testConfig().database.systemUrl, 1);
afterAll(() => system.destroy());

test('every foreign key (except to tenants) is served by an index leading with its columns', async () => {
  const { rows } = await system.raw(`
    select c.conrelid::regclass::text as "table", c.conname as "constraint",
           array(select a.attname from unnest(c.conkey) with ordinality k(num, pos)
                   join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.num order by k.pos)::text[] as columns
      from pg_constraint c
     where c.contype = 'f' and c.connamespace = 'public'::regnamespace and c.confrelid <> 'tenants'::regclass
       and not exists (
         select 1 from pg_index i
          where i.indrelid = c.conrelid and i.indpred is null
            and (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] @> c.conkey
            and (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] <@ c.conkey)
     order by 1, 2`);
  expect(rows).toEqual([]);
});
