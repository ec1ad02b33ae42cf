import { actionMoveRefusal, filtersConflictingWithClosed } from '../../core/governance/actionRules';
import { ACTION_STATUSES, FINAL_STATUSES, type ActionStatus } from '../../core/governance/types';
import { defaultFingerprint, FINDING_MOVES, findingMoveRefusal } from '../../core/security/findingRules';
import { FINDING_STATUSES } from '../../core/security/types';

const isFinal = (status: ActionStatus) => (FINAL_STATUSES as readonly string[]).includes(status);

describe('governance action moves', () => {
  const pairs = ACTION_STATUSES.flatMap((from) => ACTION_STATUSES.map((to) => [from, to] as const));

  test.each(pairs.filter(([from, to]) => !(isFinal(from) && isFinal(to) && from !== to)))(
    '%s → %s is allowed (non-final to anything, final reopened or left as it is)',
    (from, to) => expect(actionMoveRefusal(from, to)).toBeUndefined(),
  );

  test.each(pairs.filter(([from, to]) => isFinal(from) && isFinal(to) && from !== to))(
    '%s → %s (one final status to another) is a 409',
    (from, to) => expect(actionMoveRefusal(from, to)).toMatchObject({ status: 409, code: 'CONFLICT' }),
  );
});

describe('governance list filters', () => {
  test.each([
    [{ closed: true, status: 'open' as const }, ['status']],
    [{ closed: true, status: 'in_progress' as const }, ['status']],
    [{ closed: true, actionable: true }, ['actionable']],
    [{ closed: true, overdue: true }, ['overdue']],
    [{ closed: true, status: 'open' as const, actionable: true, overdue: true }, ['status', 'actionable', 'overdue']],
  ])('closed=true conflicts with filters matching only active actions: %o', (filter, names) => {
    expect(filtersConflictingWithClosed(filter).map((c) => c.name)).toEqual(names);
  });

  test.each([
    { closed: true },
    { closed: true, status: 'resolved' as const },
    { closed: true, actionable: false },
    { closed: true, overdue: false },
    { closed: false, status: 'open' as const, actionable: true, overdue: true },
    { status: 'open' as const, overdue: true },
  ])('no conflict: %o', (filter) => {
    expect(filtersConflictingWithClosed(filter)).toEqual([]);
  });
});

describe('security finding moves', () => {
  const pairs = FINDING_STATUSES.flatMap((from) => FINDING_STATUSES.map((to) => [from, to] as const));

  test.each([
    ['open', 'acknowledged'],
    ['open', 'resolved'],
    ['open', 'false_positive'],
    ['acknowledged', 'open'],
    ['acknowledged', 'resolved'],
    ['acknowledged', 'false_positive'],
    ['resolved', 'open'],
    ['false_positive', 'open'],
  ] as const)('%s → %s is in the move table', (from, to) => {
    expect(FINDING_MOVES[from]).toContain(to);
    expect(findingMoveRefusal(from, to)).toBeUndefined();
  });

  test.each(pairs.filter(([from, to]) => from !== to && !FINDING_MOVES[from].includes(to)))(
    '%s → %s is a 409 naming the moves allowed',
    (from, to) => {
      const refusal = findingMoveRefusal(from, to);
      expect(refusal).toMatchObject({ status: 409, code: 'CONFLICT' });
      expect(refusal?.message).toContain(FINDING_MOVES[from].join(', '));
    },
  );

  test.each(FINDING_STATUSES)('%s → %s is no move and passes', (status) => {
    expect(findingMoveRefusal(status, status)).toBeUndefined();
  });
});

test('the default fingerprint is the same for the same type and title, and differs when either differs', () => {
  expect(defaultFingerprint('exposed_secret', 'AWS key')).toBe(defaultFingerprint('exposed_secret', 'AWS key'));
  expect(defaultFingerprint('exposed_secret', 'AWS key')).toMatch(/^[0-9a-f]{64}$/);
  expect(defaultFingerprint('a', 'bc')).not.toBe(defaultFingerprint('ab', 'c'));
  expect(defaultFingerprint('exposed_secret', 'AWS key')).not.toBe(defaultFingerprint('exposed_secret', 'GCP key'));
});
