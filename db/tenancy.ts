import type { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { escapeLiteral } from 'pg';

/** knex's client as a transaction uses it; `transacting` is missing from knex's types. */
type KnexClient = Knex.Client & { transacting?: boolean };
/** A pooled `pg` connection as knex hands it out, with the id knex's query events carry. */
interface PooledConnection {
  __knexTxId?: string;
  connection: { stream: Writable };
}

/**
 * Runs `work` in one transaction whose row-level-security context is `tenantId`: every tenant
 * table's policy compares its rows to this setting, so queries inside see only that tenant.
 * `set local` scopes the setting to the transaction, so a pooled connection never carries one
 * tenant's context into another request. (Not `select set_config(..., true)`, the same setting
 * with a result row to describe, send and parse: a raw pipelined transaction ran 20–30% faster
 * without it.)
 *
 * Not knex's `transaction()`, which builds a whole knex instance per transaction (its largest
 * share of a request's CPU in bench:http's profile) and opens with a BEGIN of its own. Here the
 * tenant setting travels with BEGIN as one simple query (which takes no parameters, so the id is
 * an escaped literal), and `trx` is a thin knex bound to the connection. A nested
 * `trx.transaction()` is knex's own savepoint on that connection. The transaction ends with
 * `work`'s promise: `trx` has no commit() or rollback() of its own.
 *
 * `precondition`, a statement that returns no rows, travels with BEGIN the same way; when it
 * fails, withTenant fails with its error.
 */
export async function withTenant<T>(
  db: Knex,
  tenantId: string,
  work: (trx: Knex.Transaction) => Promise<T>,
  precondition?: string,
): Promise<T> {
  const client = db.client as KnexClient;
  const connection = await client.acquireConnection();
  const transaction = new TenantTransaction(db, client, connection);
  try {
    let result: T;
    let begun: Promise<unknown> | undefined;
    try {
      const setting = `set local app.tenant_id = ${escapeLiteral(tenantId)}`;
      begun = transaction.begin(`begin; ${setting}${precondition ? `; ${precondition}` : ''}`);
      result = await work(transaction.trx);
      await begun; // its failure, should the work have sent nothing to run into it
    } catch (err) {
      // The first error is the one worth reporting: a failed BEGIN or precondition (answered
      // before anything the work sent) rather than the "transaction is aborted" behind it. A
      // ROLLBACK that fails means the connection broke, and the pool discards a broken
      // connection. A COMMIT already sent behind the statements (commitBehind) rolls back the
      // transaction a failed statement aborted.
      await (transaction.earlyCommit ?? transaction.end('ROLLBACK;')).catch(() => {});
      throw await (begun ?? Promise.resolve()).then(
        () => err,
        (beginErr: unknown) => beginErr,
      );
    }
    await transaction.commit(); // a COMMIT that fails has rolled back
    transaction.committed(result);
    return result;
  } catch (err) {
    transaction.rolledBack(err);
    throw err;
  } finally {
    transaction.close();
    await client.releaseConnection(connection);
  }
}

let transactionCount = 0;

/** Where a tenant transaction's knex keeps its TenantTransaction (for commitBehind). */
const TRANSACTION = Symbol('tenant transaction');

/** One tenant transaction on one pooled connection: the knex its work uses, and its end. */
class TenantTransaction {
  /** What `work` receives: knex, with every query bound to this transaction's connection. */
  readonly trx: Knex.Transaction;
  /** The COMMIT commitBehind sent ahead of the work's end, if it did. */
  earlyCommit?: Promise<unknown>;
  private open = true;
  private settled!: { resolve: (value: unknown) => void; reject: (err: unknown) => void };

  constructor(
    db: Knex,
    private readonly client: KnexClient,
    private readonly connection: PooledConnection,
  ) {
    // Named like knex's own ids, so `query` events (which carry it) group by transaction.
    connection.__knexTxId = `tenant-trx${++transactionCount}`;
    // The pool's client with its connection handling replaced. Everything else, events
    // included, is the pool's: query listeners on `db` see this transaction's statements.
    const bound: KnexClient = Object.create(client);
    bound.transacting = true; // so a nested transaction() is a savepoint
    bound.acquireConnection = () => Promise.resolve(connection);
    bound.releaseConnection = () => Promise.resolve();
    bound.query = (conn, query) => this.guard(conn, query, () => client.query.call(bound, conn, query));
    bound.stream = (conn, query, stream, options) =>
      this.guard(conn, query, () => client.stream.call(bound, conn, query, stream, options));

    // knex(table) and every method knex has, inherited from the pool's knex; only the context
    // (which holds the client) is this transaction's own.
    const context = Object.create((db as unknown as { context: KnexContext }).context) as KnexContext;
    context.client = bound;
    context.userParams = {};
    const trx = function (tableName?: Knex.TableDescriptor, options?: unknown) {
      const builder = context.queryBuilder();
      return tableName ? builder.table(tableName, options as never) : builder;
    };
    Object.setPrototypeOf(trx, db);
    // knex's `executionPromise`: settles once the transaction has committed (its work's result)
    // or rolled back (the error). What waits for a commit listens to it; nobody has to.
    const executionPromise = new Promise((resolve, reject) => (this.settled = { resolve, reject }));
    executionPromise.catch(() => {});
    Object.assign(trx, { context, isTransaction: true, executionPromise, [TRANSACTION]: this });
    this.trx = trx as unknown as Knex.Transaction;
  }

  committed(result: unknown): void {
    this.settled.resolve(result);
  }

  rolledBack(err: unknown): void {
    this.settled.reject(err);
  }

  /**
   * Sends BEGIN without waiting for its answer: the connection pipelines (createPool), so the
   * work's first statement follows it in the same write when the work issues it before waiting
   * on anything but promises, and one round trip carries both. Anything after BEGIN runs inside
   * it or, should BEGIN fail, fails with it.
   */
  begin(sql: string): Promise<unknown> {
    this.corkUntilPromiseJobsRun();
    const begun = this.send(sql);
    begun.catch(() => {}); // withTenant reports it, after the work
    return begun;
  }

  /**
   * Holds the connection's writes until the promise jobs queued by now, and those they queue,
   * have run (knex sends a statement a few promise jobs after it is issued), so what the work
   * issues before it waits on anything but promises leaves in one write. `last` runs just before
   * they go. A tick queued from a promise job runs once the job queue is empty, and this is
   * always called from one (withTenant has awaited its connection). Not the event loop's next
   * turn: that also waits for every other ready callback, other requests' included, while
   * PostgreSQL sits idle (README, Architecture). Scheduled before anything is sent: should
   * sending throw, the connection is not left corked.
   */
  private corkUntilPromiseJobsRun(last?: () => void): void {
    const socket = this.connection.connection.stream;
    socket.cork();
    process.nextTick(() => {
      try {
        last?.();
      } finally {
        socket.uncork();
      }
    });
  }

  /** A statement of the transaction's own, sent like any query: events, debug log. */
  private send(sql: string): Promise<unknown> {
    return this.client.query(this.connection, { sql });
  }

  /**
   * COMMIT or ROLLBACK. The transaction takes no query from here on: one still to come (an
   * un-awaited promise in the work) would otherwise run outside it, or in the next request's.
   */
  end(sql: 'COMMIT;' | 'ROLLBACK;'): Promise<unknown> {
    this.open = false;
    return this.send(sql);
  }

  /**
   * Ends the work with COMMIT (or awaits the one commitBehind sent). Postgres answers a COMMIT
   * of a transaction a failed statement aborted with ROLLBACK, not an error: should the work
   * have swallowed that statement's error, this is where its outcome shows.
   */
  async commit(): Promise<void> {
    const ended = (await (this.earlyCommit ?? this.end('COMMIT;'))) as { response?: { command?: string } };
    if (ended.response?.command === 'ROLLBACK') {
      throw new Error('The tenant transaction was rolled back: one of its statements failed');
    }
  }

  /** See commitBehind: COMMIT leaves behind every statement the work issued so far. */
  commitBehind(): void {
    if (this.earlyCommit || !this.open) return;
    this.earlyCommit = new Promise((resolve, reject) =>
      this.corkUntilPromiseJobsRun(() => this.end('COMMIT;').then(resolve, reject)),
    );
    this.earlyCommit.catch(() => {}); // withTenant reports it
  }

  close(): void {
    this.open = false;
    delete this.connection.__knexTxId;
  }

  private guard<R>(conn: PooledConnection, query: unknown, run: () => Promise<R>): Promise<R> {
    if (conn !== this.connection)
      return Promise.reject(new Error('A query of a tenant transaction on another connection'));
    if (!this.open) {
      const sql = typeof query === 'string' ? query : (query as { sql?: string }).sql;
      return Promise.reject(new Error(`Query after its tenant transaction ended: ${sql}`));
    }
    return run();
  }
}

/**
 * Declares `statements` (issued before this call: argument order sees to it) the work's last:
 * COMMIT is sent right behind them, in the same write, once the promise jobs now queued have run
 * (corkUntilPromiseJobsRun), without waiting for their answers (a round trip fewer), and
 * `statements` is returned. For work whose statements need no answer from one another: anything
 * issued later is refused. From here the transaction commits if its statements succeed,
 * whatever the work does next; one that fails rolls it back (withTenant reports the statement's
 * error). Outside a tenant transaction it only returns `statements`.
 */
export function commitBehind<T>(trx: Knex, statements: Promise<T>): Promise<T> {
  (trx as { [TRANSACTION]?: TenantTransaction })[TRANSACTION]?.commitBehind();
  return statements;
}

/** What `db.context` holds; knex's types leave it out. */
interface KnexContext {
  client: KnexClient;
  userParams: Record<string, unknown>;
  queryBuilder(): Knex.QueryBuilder;
}

/**
 * Lets this transaction's COMMIT return before its write-ahead log reaches disk
 * (`synchronous_commit = off` for it alone): the flush moves off the critical path. Only for
 * writes whose loss in a crash is harmless because a later synchronous commit of the same work
 * writes them again or makes them durable (the log is flushed in order).
 */
export const commitWithoutFlush = (trx: Knex) => trx.raw('set local synchronous_commit = off');

/**
 * SQL that puts a table under tenant isolation: RLS enabled and forced (so even the owner is
 * filtered) with one policy for reads and writes. Every migration that adds a tenant table uses it.
 */
export function tenantIsolationSql(table: string): string {
  return `
    alter table ${table} enable row level security;
    alter table ${table} force row level security;
    create policy tenant_isolation on ${table}
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant());`;
}
