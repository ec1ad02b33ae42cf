import { ApiKeyFailureBudget, FailureLimiter } from '../../api/auth/failureLimiter';

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

describe('the API-key failure budgets', () => {
  const budget = () =>
    new ApiKeyFailureBudget(
      { failuresPerPrefixAndClient: 3, failuresPerPrefix: 5, failureWindowMs: 60_000 },
      () => now,
    );

  test('a prefix has one budget across every client: more addresses do not buy more attempts', () => {
    const failures = budget();
    for (const client of ['c1', 'c1', 'c2', 'c2', 'c3']) {
      expect(failures.retryAfterMs('p', client)).toBe(0);
      failures.charge('p', client);
    }
    for (const client of ['c3', 'c4']) expect(failures.retryAfterMs('p', client)).toBe(60_000);
    expect(failures.retryAfterMs('q', 'c4')).toBe(0);
  });

  test('one client is held to its own budget before the prefix budget runs out', () => {
    const failures = budget();
    for (let i = 0; i < 3; i++) failures.charge('p', 'c1');
    expect(failures.retryAfterMs('p', 'c1')).toBe(60_000);
    expect(failures.retryAfterMs('p', 'c2')).toBe(0);
  });

  test('attempts are charged when they start, so ones sent together see each other; a match is forgiven', () => {
    const failures = budget();
    const forgiven = [0, 1, 2].map(() => failures.charge('p', 'c1'));
    expect(failures.retryAfterMs('p', 'c1')).toBeGreaterThan(0);
    forgiven[0]();
    expect(failures.retryAfterMs('p', 'c1')).toBe(0);
  });
});
