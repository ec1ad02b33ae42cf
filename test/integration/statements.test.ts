import { createPool } from '../../db/pool';
import { SHAPES_PER_STATEMENT, statement } from '../../db/statements';
import { keysetStatement, type KeysetOrder } from '../../core/paging';
import { testConfig } from '../support/harness';

// Proves that a compiled statement answers what its builder would, with only its values changing
// per run: the builder runs once per shape, every run sends the same SQL as one prepared statement
// of the connection, and a value cannot change the SQL. Each test has a pool of one connection,
// so its temporary table is there for every statement.
const config = testConfig();
const pools: ReturnType<typeof createPool>[] = [];
async function withProbeTable() {
  const pool = createPool(config.database.appUrl, 1);
  pools.push(pool);
  await pool.raw('create temporary table probe (id int primary key, name text not null, tag text)');
  await pool.raw(
    `insert into probe values (1, 'ada', 'x'), (2, 'bob', null), (3, 'cy', 'x'), (4, 'dee', 'y'), (5, 'eve', 'x')`,
  );
  return pool;
}
afterAll(() => Promise.all(pools.map((pool) => pool.destroy())));

interface ProbeRow {
  id: number;
  name: string;
}

/** The connection's prepared statements that a statement() made, with how often each ran. */
const preparedOn = async (pool: ReturnType<typeof createPool>) =>
  (
    await pool.raw(
      `select statement, (generic_plans + custom_plans)::int as executions
         from pg_prepared_statements where not from_sql and statement like '%probe%' order by prepare_time`,
    )
  ).rows;

test('a statement runs with each run’s values, built and compiled once, the same SQL every run, prepared once on the connection', async () => {
  const pool = await withProbeTable();
  const sent: string[] = [];
  pool.on('query', ({ sql }: { sql: string }) => sent.push(sql));
  const build = jest.fn((q, { tag, limit }) =>
    q('probe').where({ tag }).orderBy('id').limit(limit).select('id', 'name'),
  );
  const byTag = statement<ProbeRow, { tag: string; limit: number }>(build);

  expect(await byTag.rows(pool, { tag: 'x', limit: 2 })).toEqual([
    { id: 1, name: 'ada' },
    { id: 3, name: 'cy' },
  ]);
  expect(await byTag.rows(pool, { tag: 'y', limit: 10 })).toEqual([{ id: 4, name: 'dee' }]);
  expect(build).toHaveBeenCalledTimes(1);
  const sql = 'select "id", "name" from "probe" where "tag" = $1 order by "id" asc limit $2';
  expect(sent).toEqual(Array(2).fill(sql));
  expect(await preparedOn(pool)).toEqual([{ statement: sql, executions: 2 }]);
});

test('a statement without values runs unnamed: nothing is prepared for it', async () => {
  const pool = await withProbeTable();
  const count = statement<{ n: number }>((q) => q('probe').select(q.raw('count(*)::int as n')));
  expect(await count.rows(pool)).toEqual([{ n: 5 }]);
  expect(await preparedOn(pool)).toEqual([]);
});

test('a table changing shape under a prepared statement fails that statement once; its next run prepares it again', async () => {
  const pool = await withProbeTable();
  const byId = statement<Record<string, unknown>, { id: number }>((q, { id }) => q('probe').where({ id }).select('*'));
  expect(await byId.rows(pool, { id: 2 })).toEqual([{ id: 2, name: 'bob', tag: null }]);
  await pool.raw('alter table probe add column note text');
  await expect(byId.rows(pool, { id: 2 })).rejects.toMatchObject({ code: '0A000' });
  expect(await byId.rows(pool, { id: 2 })).toEqual([{ id: 2, name: 'bob', tag: null, note: null }]);
});

test('constants the builder wrote travel with the values, in their places', async () => {
  const pool = await withProbeTable();
  const named = statement<ProbeRow, { above: number }>((q, { above }) =>
    q('probe').whereIn('name', ['ada', 'cy', 'eve']).where('id', '>', above).first('id', 'name'),
  );
  expect(await named.rows(pool, { above: 1 })).toEqual([{ id: 3, name: 'cy' }]);
  expect(await named.rows(pool, { above: 5 })).toEqual([]);
});

test('a value its shape binds must be given: undefined is refused, not sent as a null', async () => {
  const pool = await withProbeTable();
  const byTag = statement<ProbeRow, { tag: string | null }>((q, { tag }) => q('probe').where('tag', tag).select('id'));
  await expect(byTag.rows(pool, {} as { tag: string })).rejects.toThrow('A statement\'s value "tag" is undefined');
  expect(await byTag.rows(pool, { tag: 'y' })).toEqual([{ id: 4 }]);
});

test('a run is a query like any other: query events carry its SQL and values, an error names its statement', async () => {
  const pool = await withProbeTable();
  const seen: { sql: string; bindings: unknown[] }[] = [];
  pool.on('query', ({ sql, bindings }: { sql: string; bindings: unknown[] }) => seen.push({ sql, bindings }));
  const byId = statement<ProbeRow, { id: number }>((q, { id }) => q('probe').where({ id }).select('id', 'name'));
  expect(await byId.rows(pool, { id: 2 })).toEqual([{ id: 2, name: 'bob' }]);
  expect(seen).toEqual([{ sql: 'select "id", "name" from "probe" where "id" = $1', bindings: [2] }]);

  const missing = statement<ProbeRow, { id: number }>((q, { id }) => q('no_such_table').where({ id }).select('id'));
  await expect(missing.rows(pool, { id: 1 })).rejects.toThrow(
    'select "id" from "no_such_table" where "id" = $1 - relation "no_such_table" does not exist',
  );
});

test('a shape compiles once each, named by its JSON, so a null can be its own shape', async () => {
  const pool = await withProbeTable();
  const build = jest.fn((q, { tag }, tagged: boolean) =>
    (tagged ? q('probe').where({ tag }) : q('probe').whereNull('tag')).select('id'),
  );
  const byTag = statement<{ id: number }, { tag: string }, boolean>(build);

  expect(await byTag.rows(pool, { tag: 'y' }, true)).toEqual([{ id: 4 }]);
  expect(await byTag.rows(pool, { tag: 'unused' }, false)).toEqual([{ id: 2 }]);
  expect(await byTag.rows(pool, { tag: 'x' }, true)).toHaveLength(3);
  expect(build).toHaveBeenCalledTimes(2);
});

test(`past ${SHAPES_PER_STATEMENT} shapes a new shape compiles on each run and still answers`, async () => {
  const pool = await withProbeTable();
  const build = jest.fn((q, _values, shape: number) =>
    q('probe')
      .where('id', '<=', (shape % 5) + 1)
      .count('* as n'),
  );
  const counted = statement<{ n: string }, Record<never, never>, number>(build);
  for (let shape = 0; shape < SHAPES_PER_STATEMENT; shape++) await counted.rows(pool, {}, shape);
  expect(build).toHaveBeenCalledTimes(SHAPES_PER_STATEMENT);

  expect(await counted.rows(pool, {}, SHAPES_PER_STATEMENT + 2)).toEqual([{ n: '4' }]);
  expect(await counted.rows(pool, {}, SHAPES_PER_STATEMENT + 2)).toEqual([{ n: '4' }]);
  expect(build).toHaveBeenCalledTimes(SHAPES_PER_STATEMENT + 2);
  expect(await counted.rows(pool, {}, 1)).toEqual([{ n: '2' }]);
  expect(build).toHaveBeenCalledTimes(SHAPES_PER_STATEMENT + 2);
});

test('a builder sees markers, never the values, so no value can choose the SQL (reading one is a type error)', async () => {
  const pool = await withProbeTable();
  const seen: unknown[] = [];
  const byName = statement<ProbeRow, { name: string }>((q, { name }) => {
    seen.push(name);
    // @ts-expect-error a value cannot be read while its statement is built
    void name.length;
    return q('probe').where({ name }).select('id', 'name');
  });
  expect(await byName.rows(pool, { name: 'ada' })).toEqual([{ id: 1, name: 'ada' }]);
  expect(await byName.rows(pool, { name: 'bob' })).toEqual([{ id: 2, name: 'bob' }]);
  expect(seen).toHaveLength(1);
  expect(seen[0]).not.toBe('ada');
});

test('a keyset statement pages forwards and backwards from a position, with its values and shape', async () => {
  const pool = await withProbeTable();
  const order: KeysetOrder = { columns: [{ column: 'name', kind: 'text' }], direction: 'asc' };
  const page = keysetStatement<{ id: number }, number, { tag: string }, boolean>({
    order,
    build: (q, { tag }, tagged) => (tagged ? q('probe').where({ tag }) : q('probe')).select('id'),
    toItem: (row) => row.id,
  });

  const first = await page(pool, { limit: 2, afterId: null }, { tag: 'unused' }, false);
  expect(first).toEqual([
    { id: '["ada"]', item: 1 },
    { id: '["bob"]', item: 2 },
    { id: '["cy"]', item: 3 },
  ]);
  expect(await page(pool, { limit: 2, afterId: '["bob"]' }, { tag: 'x' }, true)).toEqual([
    { id: '["cy"]', item: 3 },
    { id: '["eve"]', item: 5 },
  ]);
  expect(await page(pool, { limit: 5, afterId: '["dee"]', backward: true }, { tag: 'unused' }, false)).toEqual([
    { id: '["cy"]', item: 3 },
    { id: '["bob"]', item: 2 },
    { id: '["ada"]', item: 1 },
  ]);
  await expect(page(pool, { limit: 2, afterId: '[1]' }, { tag: 'x' }, true)).rejects.toMatchObject({
    status: 400,
  });
});
