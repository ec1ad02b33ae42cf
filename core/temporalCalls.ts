import { Connection, type ConnectionLike } from '@temporalio/client';

// The API process's Temporal connection, kept from leaving Node's async hooks on.
//
// The client keeps a call's metadata, deadline and abort signal in an AsyncLocalStorage
// (`callContextStorage`): it runs every call that names a namespace (a start, a signal, a query)
// inside `withMetadata`, and `withDeadline` / `withAbortSignal` scope whatever runs inside them.
// On Node 20 the first `run` of any AsyncLocalStorage turns async hooks on for the whole process,
// and they stay on: every promise of every later request pays for them (an `await` ~40 → ~110 ns
// here). An API that had answered one GET /system served /healthz ~0.1× of bare Koa slower and a
// cached-key read ~0.08× of the raw transaction slower, for as long as it ran (README: Operators).
// So the storage is turned off again as soon as nothing needs it; its next `run` turns it back on.

/** Per connection: the deadline and signal scopes in flight, which need the storage until they end. */
const scopesInFlight = new WeakMap<ConnectionLike, number>();

/**
 * Turns `connection`'s storage off after each `run` the client makes on its own, unless one of our
 * scopes (below) is in flight. Those runs are `withMetadata`'s around a namespaced call, which
 * reads the metadata when it creates the call, inside the `run`: nothing reads it later.
 */
export function keepAsyncHooksOff(connection: Connection): Connection {
  const storage = connection.callContextStorage;
  type Run = (store: unknown, callback: (...args: unknown[]) => unknown, ...args: unknown[]) => unknown;
  const run = storage.run.bind(storage) as Run;
  let depth = 0;
  const runThenTurnOff: Run = (store, callback, ...args) => {
    depth++;
    try {
      return run(store, callback, ...args);
    } finally {
      if (--depth === 0 && !scopesInFlight.get(connection)) storage.disable();
    }
  };
  storage.run = runThenTurnOff as typeof storage.run;
  return connection;
}

async function scoped<T>(connection: ConnectionLike, call: () => Promise<T>): Promise<T> {
  scopesInFlight.set(connection, (scopesInFlight.get(connection) ?? 0) + 1);
  try {
    return await call();
  } finally {
    const left = scopesInFlight.get(connection)! - 1;
    scopesInFlight.set(connection, left);
    // Another kind of connection (none here) keeps whatever it has.
    if (left === 0 && connection instanceof Connection) connection.callContextStorage.disable();
  }
}

/** `fn`'s Temporal requests fail with DEADLINE_EXCEEDED after `deadline` (ms since the epoch). */
export const callWithDeadline = <T>(connection: ConnectionLike, deadline: number, fn: () => Promise<T>) =>
  scoped(connection, () => connection.withDeadline(deadline, fn));

/** `fn`'s Temporal requests are cancelled when `signal` aborts. */
export const callWithAbortSignal = <T>(connection: ConnectionLike, signal: AbortSignal, fn: () => Promise<T>) =>
  scoped(connection, () => connection.withAbortSignal(signal, fn));
