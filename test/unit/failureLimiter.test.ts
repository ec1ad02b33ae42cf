import { FailureLimiter } from '../../api/auth/failureLimiter';

// The per-prefix-and-client counter behind 429s on failed API-key validations.
let now = 0;
const limiter = () => new FailureLimiter(3, 60_000, () => now);
beforeEach(() => (now = 0));

test('a key may fail up to the limit; past it, it waits until its window ends', () => {
  const failures = limiter();
  for (let i = 0; i < 3; i++) {
    expect(failures.retryAfterMs('p|c')).toBe(0);
    failures.recordFailure('p|c');
  }
  now = 10_000;
  expect(failures.retryAfterMs('p|c')).toBe(50_000);
  now = 60_000;
  expect(failures.retryAfterMs('p|c')).toBe(0);
  // A new window starts from zero.
  failures.recordFailure('p|c');
  expect(failures.retryAfterMs('p|c')).toBe(0);
});

test('keys are counted apart: one client failing with a prefix does not limit another prefix or client', () => {
  const failures = limiter();
  for (let i = 0; i < 3; i++) failures.recordFailure('p|c');
  expect(failures.retryAfterMs('p|c')).toBeGreaterThan(0);
  expect(failures.retryAfterMs('q|c')).toBe(0);
  expect(failures.retryAfterMs('p|d')).toBe(0);
});
