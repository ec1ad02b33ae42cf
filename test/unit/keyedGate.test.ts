import { AggregateReads } from '../../api/http/aggregateReads';
import { KeyedGate } from '../../core/keyedGate';
import { ApiError } from '../../core/errors';

/** A promise and the function that settles it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedGate', () => {
  test('admits up to the limit per key; another key is admitted whatever the first holds', async () => {
    const gate = new KeyedGate(2);
    expect(await gate.enter('a', 0)).toBeDefined();
    expect(await gate.enter('a', 0)).toBeDefined();
    expect(await gate.enter('a', 0)).toBeUndefined();
    expect(await gate.enter('b', 0)).toBeDefined();
    expect(gate.running('a')).toBe(2);
  });

  test('a waiting caller gets the slot released to it, before any newcomer', async () => {
    const gate = new KeyedGate(1);
    const release = (await gate.enter('a', 0))!;
    const waiting = gate.enter('a', 10_000);
    release();
    release(); // twice: the second does nothing
    expect(await gate.enter('a', 0)).toBeUndefined();
    const handedOn = await waiting;
    expect(handedOn).toBeDefined();
    handedOn!();
    expect(gate.running('a')).toBe(0);
  });

  test('a caller that waited its whole wait is refused, and leaves the line', async () => {
    const gate = new KeyedGate(1);
    const release = (await gate.enter('a', 0))!;
    expect(await gate.enter('a', 5)).toBeUndefined();
    release();
    expect(gate.running('a')).toBe(0);
  });
});

describe('AggregateReads', () => {
  const limits = { cacheTtlMs: 60_000, concurrentPerTenant: 1, queueWaitMs: 5 };

  test('concurrent reads of one aggregate share one load, and the answer is kept for the next read', async () => {
    const reads = new AggregateReads(limits);
    const answer = deferred<{ n: number }>();
    const load = jest.fn(() => answer.promise);
    const readers = Array.from({ length: 50 }, () => reads.read('t1', 'languages', load));
    answer.resolve({ n: 7 });
    expect(await Promise.all(readers)).toEqual(Array(50).fill({ n: 7 }));
    expect(await reads.read('t1', 'languages', load)).toEqual({ n: 7 });
    expect(load).toHaveBeenCalledTimes(1);
  });

  test("past a tenant's concurrent loads, its read waits, then is a 429 with Retry-After; another tenant is not held up", async () => {
    const reads = new AggregateReads(limits);
    const slow = deferred<object>();
    const first = reads.read('t1', 'teams', () => slow.promise);
    const refused = await reads.read('t1', 'unowned', async () => ({})).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '1' } });
    expect(await reads.read('t2', 'teams', async () => ({ other: true }))).toEqual({ other: true });
    slow.resolve({});
    await first;
  });

  test('a failed load is not kept: the next read loads again', async () => {
    const reads = new AggregateReads(limits);
    await expect(reads.read('t1', 'x', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await reads.read('t1', 'x', async () => ({ ok: 1 }))).toEqual({ ok: 1 });
  });
});
