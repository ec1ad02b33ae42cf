import { LoopPause } from '../../core/notifiedLoop';

// The pause between a background loop's passes (outbox drain, scorecard waker): woken early by a
// notification, including one that arrived while the loop was working, and ended by halt.

const settledWithin = async (pause: Promise<void>, ms: number) =>
  Promise.race([pause.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

test('a wake ends the pause under way', async () => {
  const pause = new LoopPause();
  const sleeping = pause.sleep(60_000);
  pause.wake();
  expect(await settledWithin(sleeping, 100)).toBe(true);
});

test('a wake that came while the loop worked ends its next pause at once, and only that one', async () => {
  const pause = new LoopPause();
  pause.wake();
  expect(await settledWithin(pause.sleep(60_000), 100)).toBe(true);
  const next = pause.sleep(60_000);
  expect(await settledWithin(next, 100)).toBe(false);
  pause.halt();
  expect(await settledWithin(next, 100)).toBe(true);
});

test('a pause that is not wakeable (backing off) ignores wakes but not halt', async () => {
  const pause = new LoopPause();
  const backingOff = pause.sleep(60_000, false);
  pause.wake();
  expect(await settledWithin(backingOff, 100)).toBe(false);
  pause.halt();
  expect(await settledWithin(backingOff, 100)).toBe(true);
  expect(await settledWithin(pause.sleep(60_000), 100)).toBe(true);
});

test('without a wake the pause lasts its time', async () => {
  const pause = new LoopPause();
  expect(await settledWithin(pause.sleep(20), 1_000)).toBe(true);
});
