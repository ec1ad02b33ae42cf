import { Connection, type ConnectionLike } from '@temporalio/client';

// Temporal calls with a deadline or an abort signal, for the API process, without leaving
// Node's async hooks on after them.
//
// The client keeps a call's deadline and signal in an AsyncLocalStorage (`callContextStorage`).
// On Node 20 the first `run` of any AsyncLocalStorage turns async hooks on for the whole
// process, and they stay on: every promise of every later request pays for them (an `await`
// ~40 → ~110 ns here). An API that had answered one GET /system served /healthz 0.11× of
// bare Koa slower and a cached-key read 0.04× slower, for as long as it ran. So the storage is
// turned off again whenever no such call is in flight; the next one turns it back on.

const inFlight = new WeakMap<ConnectionLike, number>();

async function scoped<T>(connection: ConnectionLike, call: () => Promise<T>): Promise<T> {
  inFlight.set(connection, (inFlight.get(connection) ?? 0) + 1);
  try {
    return await call();
  } finally {
    const left = inFlight.get(connection)! - 1;
    inFlight.set(connection, left);
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
