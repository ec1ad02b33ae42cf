import { RequestPacer } from '../../api/http/requestPacer';

// A tenant's requests paced to a rate with a burst of one second's worth; no wait allowed here
// (maxWaitMs 0), so every answer is immediate and the clock is the test's.

let now = 1_000_000;
const pacer = () => new RequestPacer(10, 0, () => now);

test("a burst of one second's requests passes at once; the next is refused until its turn comes", async () => {
  const pace = pacer();
  const first = await Promise.all(Array.from({ length: 10 }, () => pace.take('a')));
  expect(first.every(Boolean)).toBe(true);
  expect(await pace.take('a')).toBe(false);
  now += 100; // one interval at 10 a second
  expect(await pace.take('a')).toBe(true);
  expect(await pace.take('a')).toBe(false);
});

test("one key's pace leaves another's alone", async () => {
  const pace = pacer();
  for (let i = 0; i < 10; i++) await pace.take('a');
  expect(await pace.take('a')).toBe(false);
  expect(await pace.take('b')).toBe(true);
});

test('a request whose turn is within the wait waits for it, then passes', async () => {
  const pace = new RequestPacer(10, 500);
  for (let i = 0; i < 10; i++) await pace.take('a');
  const started = Date.now();
  expect(await pace.take('a')).toBe(true);
  // Its turn was one interval (100 ms) off: it waited for it, not refused and not let through.
  expect(Date.now() - started).toBeGreaterThanOrEqual(90);
});
