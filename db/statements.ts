import knex, { type Knex } from 'knex';

// Statements compiled once and run with their values alone: knex's builder compiles a query on
// every run. A statement here is still written with the builder; it is compiled the first time it
// runs (once per shape, where the request decides the shape) and from then on runs as raw SQL
// with its values.

/** Compiles builders without a connection: PostgreSQL's SQL, never run. */
const compiler = knex({ client: 'pg' });

/**
 * What a statement's builder receives instead of its values: one marker per value, to pass to
 * knex wherever the value goes. Typed `never` so it fits anywhere a value does, and so that
 * reading it (`.length`, a method) does not compile: a statement's shape may depend only on its
 * `shape` argument, never on a value. (A marker read but not bound is not refused: a builder
 * destructures every value, and a shape may leave one out.) A list of values goes as one
 * parameter (`= any(?)`), not spread by `whereIn`.
 */
export type Placeholders<Values> = { readonly [Name in keyof Values]-?: never };

/** One binding of a compiled statement: a value's name, or a constant the builder wrote. */
type Slot = { value: string } | { constant: unknown };

interface Compiled {
  sql: string;
  slots: Slot[];
}

// Markers are non-negative integers, which knex takes everywhere a value goes (`limit` and
// `offset` parse their argument as one, and refuse a negative), far beyond any constant a
// statement writes.
const FIRST_MARKER = 9_007_199_254_000_000;

/** Compiles what `build` makes of markers, and names the value each binding comes from. */
function compile<Values, Shape>(
  build: (q: Knex, values: Placeholders<Values>, shape: Shape) => Knex.QueryBuilder | Knex.Raw,
  shape: Shape,
): Compiled {
  const markers = new Map<number, string>();
  const placeholders = new Proxy({} as Placeholders<Values>, {
    get: (_, name) => {
      const marker = FIRST_MARKER + markers.size;
      markers.set(marker, String(name));
      return marker;
    },
  });
  const { sql, bindings } = build(compiler, placeholders, shape).toSQL();
  const slots = bindings.map((binding): Slot => {
    const name = typeof binding === 'number' ? markers.get(binding) : undefined;
    return name === undefined ? { constant: binding } : { value: name };
  });
  return { sql, slots };
}

/** At most this many shapes of one statement are kept compiled; past it, a new shape compiles per run. */
export const SHAPES_PER_STATEMENT = 256;

/** No values. */
export type NoValues = Record<never, never>;

/**
 * What running a statement takes after its knex: its values (left out when it has none), then
 * its shape (when the request decides one; values then come first even when empty).
 */
export type RunArgs<Values, Shape> = Shape extends undefined
  ? keyof Values extends never
    ? []
    : [values: Values]
  : [values: Values, shape: Shape];

/**
 * A statement whose SQL may depend on the request through `shape` (which filters are given,
 * which fields are wanted): compiled once per shape. A shape is plain data (a string, a
 * boolean, an object of them), and its JSON names it. Without a shape, a statement has one.
 */
export interface Statement<Row, Values, Shape> {
  rows(db: Knex, ...args: RunArgs<Values, Shape>): Promise<Row[]>;
  /** The first row, or undefined when there is none: for a read of one row. */
  first(db: Knex, ...args: RunArgs<Values, Shape>): Promise<Row | undefined>;
}

export function statement<Row, Values = NoValues, Shape = undefined>(
  build: (q: Knex, values: Placeholders<Values>, shape: Shape) => Knex.QueryBuilder | Knex.Raw,
): Statement<Row, Values, Shape> {
  const compiled = new Map<string, Compiled>();
  const rows: Statement<Row, Values, Shape>['rows'] = async (db, ...args) => {
    const [values, shape] = args as [values?: Values, shape?: Shape];
    const key = JSON.stringify(shape);
    let known = compiled.get(key);
    if (!known) {
      known = compile(build, shape as Shape);
      if (compiled.size < SHAPES_PER_STATEMENT) compiled.set(key, known);
    }
    const named = (values ?? {}) as Record<string, unknown>;
    const bindings = known.slots.map((slot) => {
      if ('constant' in slot) return slot.constant;
      // A value the shape binds must be given: pg would send undefined as a null.
      const value = named[slot.value];
      if (value === undefined) throw new Error(`A statement's value "${slot.value}" is undefined`);
      return value;
    });
    return (await run(db, known.sql, bindings)).rows as Row[];
  };
  return { rows, first: async (db, ...args) => (await rows(db, ...args))[0] };
}

/** At most this many statements are prepared; past it, a new statement runs unnamed. */
const PREPARED_STATEMENTS = 2_000;

/** Each prepared statement's name, by its SQL. A name is never reused for other SQL. */
const preparedNames = new Map<string, string>();
let lastName = 0;

function preparedName(sql: string): string | undefined {
  let name = preparedNames.get(sql);
  if (name === undefined && preparedNames.size < PREPARED_STATEMENTS) {
    name = `shipyard_${++lastName}`;
    preparedNames.set(sql, name);
  }
  return name;
}

/** PostgreSQL's error for a prepared statement whose table changed shape under it (a migration). */
const CACHED_PLAN_CHANGED = '0A000';

/**
 * Runs compiled SQL (knex's `?` placeholders) with its values on `db`: a transaction, or the pool.
 * A statement with values runs under its name (pg's `name`, through knex's `options()`), so each
 * connection has PostgreSQL parse, rewrite (row-level security included) and plan it once rather
 * than on every run. PostgreSQL may switch it to a generic plan after five runs, only when that
 * plan is estimated no costlier. A statement whose table changed shape fails once: its next run
 * is prepared afresh under a new name.
 */
async function run(db: Knex, sql: string, bindings: unknown[]): Promise<{ rows: unknown[] }> {
  const name = bindings.length > 0 ? preparedName(sql) : undefined;
  const query = db.raw(sql, bindings as Knex.RawBinding[]);
  try {
    return await (name === undefined ? query : query.options({ name }));
  } catch (err) {
    if ((err as { code?: string }).code === CACHED_PLAN_CHANGED) preparedNames.delete(sql);
    throw err;
  }
}

/**
 * Optional equality filters, the commonest shape: of `columns` (a filter's name → its column),
 * the names `filter` gives a value (not undefined). Pass them as the shape, and `whereGiven`
 * binds only their values.
 */
export const givenFilters = <Name extends string>(
  filter: NoInfer<Partial<Record<Name, unknown>>>,
  columns: Record<Name, string>,
) => (Object.keys(columns) as Name[]).filter((name) => filter[name] !== undefined);

/** `column = value` for each filter `given` names (see givenFilters). */
export function whereGiven<Name extends string>(
  query: Knex.QueryBuilder,
  columns: Record<Name, string>,
  values: Placeholders<Record<Name, unknown>>,
  given: readonly Name[],
): Knex.QueryBuilder {
  for (const name of given) query.where(columns[name], values[name]);
  return query;
}
