import { ApiError } from '../../core/errors';
import { completeness, daysToRollUp, readRange } from '../../core/insights/platformMetricsRules';

// The pure parts of platform metrics: the days a read covers and the days a rollup computes.

const TODAY = '2026-03-01';

describe('readRange', () => {
  const refusal = (query: { from?: string; to?: string }) => {
    try {
      readRange(query, TODAY, 366);
    } catch (err) {
      return err instanceof ApiError ? { status: err.status, details: err.details } : err;
    }
    throw new Error('accepted');
  };

  test('defaults to the last 30 days, today included (across a month end)', () => {
    expect(readRange({}, TODAY, 366)).toEqual({ from: '2026-01-31', to: TODAY });
    expect(readRange({ to: '2026-02-10' }, TODAY, 366)).toEqual({ from: '2026-01-12', to: '2026-02-10' });
  });

  test('takes a range of exactly the most days, and refuses one day more with a 400 naming the limit', () => {
    expect(readRange({ from: '2025-03-01', to: TODAY }, TODAY, 366)).toEqual({ from: '2025-03-01', to: TODAY });
    expect(refusal({ from: '2025-02-28', to: TODAY })).toEqual({
      status: 400,
      details: [{ field: 'from', message: 'is too early: a range covers at most 366 days' }],
    });
  });

  test.each([
    [{ from: '2026-02-30' }, 'from', 'must be a date (YYYY-MM-DD)'],
    [{ to: '2026-3-1' }, 'to', 'must be a date (YYYY-MM-DD)'],
    [{ to: '0000-00-00' }, 'to', 'must be a date (YYYY-MM-DD)'],
    [{ to: '2026-03-02' }, 'to', 'must not be after today (UTC)'],
    [{ from: '2026-02-20', to: '2026-02-19' }, 'from', 'must not be after to'],
  ])('refuses %j with a 400 on %s', (query, field, message) => {
    expect(refusal(query)).toEqual({ status: 400, details: [{ field, message }] });
  });
});

describe('daysToRollUp', () => {
  test('a nightly run after a rolled-up night computes yesterday and, again, the day before', () => {
    expect(daysToRollUp(TODAY, '2026-02-27', '2025-01-01', 30)).toEqual(['2026-02-27', '2026-02-28']);
  });

  test('the latest two days are computed again when already rolled up (the rollup replaces them)', () => {
    expect(daysToRollUp(TODAY, '2026-02-28', '2025-01-01', 30)).toEqual(['2026-02-27', '2026-02-28']);
  });

  test('the days the schedule missed are computed, oldest first', () => {
    expect(daysToRollUp(TODAY, '2026-02-24', '2025-01-01', 30)).toEqual([
      '2026-02-25',
      '2026-02-26',
      '2026-02-27',
      '2026-02-28',
    ]);
  });

  test('a backfill reaches at most backfillDays back, and never before the tenant existed', () => {
    expect(daysToRollUp(TODAY, null, '2025-01-01', 3)).toEqual(['2026-02-26', '2026-02-27', '2026-02-28']);
    expect(daysToRollUp(TODAY, '2026-02-20', '2025-01-01', 1)).toEqual(['2026-02-28']);
    expect(daysToRollUp(TODAY, null, '2026-02-27', 30)).toEqual(['2026-02-27', '2026-02-28']);
    expect(daysToRollUp(TODAY, null, TODAY, 30)).toEqual([]);
  });
});

test('completeness gives each share of the entities, and null shares for an empty catalog', () => {
  expect(completeness({ entities: 3, with_owner: 2, with_docs: 0, with_tier: 3 })).toEqual({
    entities: 3,
    with_owner: 2,
    with_docs: 0,
    with_tier: 3,
    owner_share: 0.667,
    docs_share: 0,
    tier_share: 1,
  });
  expect(completeness({ entities: 0, with_owner: 0, with_docs: 0, with_tier: 0 })).toMatchObject({
    owner_share: null,
  });
  expect(completeness(null)).toBeNull();
});
