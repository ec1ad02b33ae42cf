import { randomUUID } from 'node:crypto';
import { createPool } from '../../db/pool';
import { PREPARED_PER_CONNECTION } from '../../db/preparedStatements';
import { withTenant } from '../../db/tenancy';
import { testConfig } from '../support/harness';

// Proves that a pool's statements with parameters become prepared statements of their
// connection, within a bound, and that nothing a caller sees changes because of it. Each test
// has a pool of one connection, so every statement runs on the connection it then inspects.
const config = testConfig();
const pools: ReturnType<typeof createPool>[] = [];
const singleConnection = () => {
  const pool = createPool(config.database.appUrl, 1);
  pools.push(pool);
  return pool;
};
afterAll(() => Promise.all(pools.map((pool) => pool.destroy())));

interface PreparedRow {
  statement: string;
  executions: number;
}
const preparedOn = async (pool: ReturnType<typeof createPool>): Promise<PreparedRow[]> =>
  (
    await pool.raw(
      `select statement, (generic_plans + custom_plans)::int as executions
         from pg_prepared_statements where not from_sql order by prepare_time`,
    )
  ).rows;

test('a statement with parameters is parsed once per connection and run again from there, in and out of tenant transactions', async () => {
  const pool = singleConnection();
  const sql = 'select id from role_bundles where name = ?';
  await pool.raw(sql, ['none-such']);
  await withTenant(pool, randomUUID(), (trx) => trx.raw(sql, ['none-such']));
  await withTenant(pool, randomUUID(), (trx) => trx('role_bundles').where({ name: 'none-such' }).select('id'));

  const prepared = await preparedOn(pool);
  expect(prepared).toEqual([
    { statement: 'select id from role_bundles where name = $1', executions: 2 },
    { statement: 'select "id" from "role_bundles" where "name" = $1', executions: 1 },
  ]);
});

test('a statement without parameters stays unnamed, so SQL of several statements still runs', async () => {
  const pool = singleConnection();
  const answer = await pool.raw('select 1 as one; select 2 as two');
  expect(answer.map((result: { rows: unknown[] }) => result.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);
  expect(await preparedOn(pool)).toEqual([]);
});

test(`a connection keeps at most ${PREPARED_PER_CONNECTION} statements; past that they run unnamed and still answer`, async () => {
  const pool = singleConnection();
  for (let i = 0; i <= PREPARED_PER_CONNECTION; i++) {
    const { rows } = await pool.raw(`select ?::int + ${i} as n`, [1]);
    expect(rows).toEqual([{ n: 1 + i }]);
  }
  const prepared = await preparedOn(pool);
  expect(prepared).toHaveLength(PREPARED_PER_CONNECTION);
  expect(prepared.at(-1)!.statement).toBe(`select $1::int + ${PREPARED_PER_CONNECTION - 1} as n`);
});

test('a table changing shape under a prepared statement fails that statement once; it is prepared again after', async () => {
  const pool = singleConnection();
  await pool.raw('create temporary table shape_probe (a int)');
  await pool.raw('insert into shape_probe values (?)', [1]);
  const select = () => pool.raw('select * from shape_probe where a = ?', [1]);
  expect((await select()).rows).toEqual([{ a: 1 }]);

  await pool.raw('alter table shape_probe add column b int');
  await expect(select()).rejects.toMatchObject({ code: '0A000', message: expect.stringMatching(/cached plan/) });
  expect((await select()).rows).toEqual([{ a: 1, b: null }]);
});

test('pg options set through knex (rowMode) still apply, and an empty query is still refused by knex', async () => {
  const pool = singleConnection();
  const result = await pool.raw('select ?::int as n, 2 as m', [1]).options({ rowMode: 'array' });
  expect(result.rows).toEqual([[1, 2]]);
  expect((await preparedOn(pool)).map((row) => row.statement)).toEqual(['select $1::int as n, 2 as m']);
  await expect(pool.raw('')).rejects.toThrow('The query is empty');
});
