import type { Knex } from 'knex';
import { Query } from 'pg';

/**
 * Statements a connection keeps prepared, at most. Past that its new statements run unnamed,
 * as every statement did before; the pool retires idle connections (and their statements).
 */
export const PREPARED_PER_CONNECTION = 200;

/** A connection's prepared statements: SQL text → name. Names are never reused (see forget). */
const preparedOn = new WeakMap<object, Map<string, string>>();
let lastName = 0;

/**
 * The name a statement with parameters runs under on this connection, so PostgreSQL parses,
 * rewrites (row-level security included) and plans it once per connection rather than once per
 * execution; in bench:http that was a third of a tenant read's database CPU. After five
 * executions PostgreSQL may switch a statement to a generic plan, only when that plan is
 * estimated no costlier than the custom ones. Statements without parameters go by the simple
 * protocol and stay unnamed, which keeps multi-statement SQL (`begin; set local ...`) working.
 */
function statementName(connection: object, sql: string): string | undefined {
  let prepared = preparedOn.get(connection);
  if (!prepared) preparedOn.set(connection, (prepared = new Map()));
  const known = prepared.get(sql);
  if (known || prepared.size >= PREPARED_PER_CONNECTION) return known;
  const name = `shipyard_${++lastName}`;
  prepared.set(sql, name);
  return name;
}

/**
 * Forgets a connection's statements, so each is prepared again under a new name. For the
 * error PostgreSQL gives a prepared statement whose table changed shape under it ("cached plan
 * must not change result type", after a migration): that statement fails once, not forever.
 */
function forget(connection: object, err: unknown): void {
  if ((err as { code?: string }).code === '0A000') preparedOn.delete(connection);
}

interface CompiledQuery {
  sql: string;
  bindings?: unknown[];
  options?: { name?: string };
  response?: unknown;
}

type RunQuery = (connection: PgConnection, query: CompiledQuery) => Promise<CompiledQuery>;
interface PgConnection {
  query(statement: Query): unknown;
}

/**
 * What knex's `_query` does, with the statement handed to pg as a ready Query: pg copies a
 * config object through its property descriptors, 2 µs per statement, where a Query built from
 * text and values costs 0.2 µs.
 */
function submit(connection: PgConnection, query: CompiledQuery, name: string | undefined): Promise<CompiledQuery> {
  return new Promise((resolve, reject) => {
    const statement = new Query(query.sql, query.bindings ?? [], (err: Error | undefined, response: unknown) => {
      if (err) return reject(err);
      query.response = response;
      resolve(query);
    });
    // Read when pg sends the statement; pg's typings leave the field out.
    (statement as Query & { name?: string }).name = name;
    connection.query(statement);
  });
}

/**
 * Makes every statement with parameters that `db` runs a prepared statement of its connection,
 * and hands each statement to pg as a ready Query (`submit`).
 */
export function prepareStatements(db: Knex): void {
  const client = db.client as { _query: RunQuery };
  const knexQuery = client._query;
  client._query = function (this: unknown, connection, query) {
    const { name: given, ...others } = query.options ?? {};
    const name = given ?? (query.bindings?.length ? statementName(connection, query.sql) : undefined);
    // pg options other than the name (rowMode, types), and knex's own errors, stay knex's.
    const plain = query.sql && Object.keys(others).length === 0;
    return (
      plain
        ? submit(connection, query, name)
        : knexQuery.call(this, connection, { ...query, options: { ...query.options, name } })
    ).catch((err: unknown) => {
      forget(connection, err);
      throw err;
    });
  };
}
