import type { Knex } from 'knex';
import type { ClientBase, QueryResult } from 'pg';

// The one module that relies on knex's undocumented internals: its client's connection handling
// and the context a knex instance delegates to. A tenant transaction uses them instead of knex's
// transaction(), which costs a round trip more and builds a knex instance per transaction: over
// 10% of the cached-key read's throughput, measured side by side (docs/benchmarks.md, "Request
// path"). knex is pinned exactly in package.json, and test/integration/knexInternals.test.ts
// fails when an upgrade changes any of what follows.

/** A pooled connection as knex hands it out: a `pg` client. */
export type PooledConnection = ClientBase;

/** knex's client, as used here; knex's types leave `transacting` out and type the rest `any`. */
interface KnexClient extends Knex.Client {
  transacting?: boolean;
  acquireConnection(): Promise<PooledConnection>;
  releaseConnection(connection: PooledConnection): Promise<void>;
  query(connection: PooledConnection, query: { sql: string }): Promise<unknown>;
  stream(connection: PooledConnection, query: unknown, stream: unknown, options: unknown): Promise<unknown>;
}

/** What a knex instance's `context` holds; knex's types leave it out. */
interface KnexContext {
  client: KnexClient;
  userParams: Record<string, unknown>;
  queryBuilder(): Knex.QueryBuilder;
}

const clientOf = (db: Knex) => db.client as KnexClient;

/** A connection of `db`'s pool, the caller's until releaseConnection (within the pool's acquire timeout). */
export const acquireConnection = (db: Knex): Promise<PooledConnection> => clientOf(db).acquireConnection();

export const releaseConnection = (db: Knex, connection: PooledConnection): Promise<void> =>
  clientOf(db).releaseConnection(connection);

/**
 * Sends `sql` on `connection` as a simple query through pg's own `query`, not knex's: for the
 * statements that open and close a tenant transaction, which need none of knex's query handling
 * (its bindings, its response shaping, its error wrapping) and cost the cached-key read CPU
 * (docs/benchmarks.md). Its `query` event still goes out, as knex's
 * client emits it, so a listener sees the whole transaction. Several statements in `sql`
 * answer with a result each.
 */
export function sendOn(db: Knex, connection: PooledConnection, sql: string): Promise<QueryResult | QueryResult[]> {
  clientOf(db).emit('query', { sql, bindings: [] });
  return connection.query(sql);
}

/**
 * A knex whose every query runs on `connection`, as a transaction's does: `trx(table)`, `raw`
 * and every other method of `db`, with `db`'s events; a nested `transaction()` is knex's own
 * savepoint. `admit` sees each query's SQL before it is sent, and refuses it by throwing.
 * `executionPromise` is what knex's transactions carry under that name: it settles when the
 * transaction ends.
 */
export function knexOnConnection(
  db: Knex,
  connection: PooledConnection,
  admit: (sql: string | undefined) => void,
  executionPromise: Promise<unknown>,
): Knex.Transaction {
  const client = clientOf(db);
  const guard = <R>(conn: PooledConnection, query: unknown, run: () => Promise<R>): Promise<R> => {
    if (conn !== connection) return Promise.reject(new Error('A query of a tenant transaction on another connection'));
    try {
      admit(typeof query === 'string' ? query : (query as { sql?: string }).sql);
    } catch (err) {
      return Promise.reject(err);
    }
    return run();
  };
  // The pool's client with its connection handling replaced; everything else, events included,
  // is the pool's.
  const bound: KnexClient = Object.create(client);
  bound.transacting = true; // so a nested transaction() is a savepoint
  bound.acquireConnection = () => Promise.resolve(connection);
  bound.releaseConnection = () => Promise.resolve();
  bound.query = (conn, query) => guard(conn, query, () => client.query.call(bound, conn, query));
  bound.stream = (conn, query, stream, options) =>
    guard(conn, query, () => client.stream.call(bound, conn, query, stream, options));

  // knex(table) and every method of the pool's knex, inherited; only the context (which holds
  // the client) is this transaction's own.
  const context = Object.create((db as unknown as { context: KnexContext }).context) as KnexContext;
  context.client = bound;
  context.userParams = {};
  const trx = function (tableName?: Knex.TableDescriptor, options?: unknown) {
    const builder = context.queryBuilder();
    return tableName ? builder.table(tableName, options as never) : builder;
  };
  Object.setPrototypeOf(trx, db);
  Object.assign(trx, { context, isTransaction: true, executionPromise });
  return trx as unknown as Knex.Transaction;
}
