import {
  changeFailureRateBand,
  DAY_MS,
  deploymentFrequencyBand,
  leadTimeBand,
  leadTimes,
  median,
  timeToRestoreBand,
  windowMs,
} from '../../core/insights/doraRules';

// The DORA metrics' pure parts: the 2023 report's bands at and around each bound, the median,
// and the lead-time walk from commits to the deployment that carries them.

const HOUR = 3_600_000;
const at = (hours: number) => new Date(Date.UTC(2026, 10, 1) + hours * HOUR);
const sha = (prefix: string) => prefix.padEnd(40, '0');

describe('bands by the 2023 Accelerate State of DevOps Report', () => {
  test('deployment frequency: elite from one a day, high from one a week, medium from one a month, else low', () => {
    expect([3, 1, 0.99, 1 / 7, 0.1, 1 / 30, 0.03, 0].map(deploymentFrequencyBand)).toEqual([
      'elite',
      'elite',
      'high',
      'high',
      'medium',
      'medium',
      'low',
      'low',
    ]);
  });

  test('lead time: elite under a day, high up to a week, medium up to a month, else low', () => {
    expect([HOUR, DAY_MS, 7 * DAY_MS, 7 * DAY_MS + 1, 30 * DAY_MS, 31 * DAY_MS].map(leadTimeBand)).toEqual([
      'elite',
      'high',
      'high',
      'medium',
      'medium',
      'low',
    ]);
  });

  test('change failure rate: elite to 5%, high to 10%, medium to 15%, else low', () => {
    expect([0, 5, 5.1, 10, 15, 15.1, 64].map(changeFailureRateBand)).toEqual([
      'elite',
      'elite',
      'high',
      'high',
      'medium',
      'low',
      'low',
    ]);
  });

  test('time to restore: elite under an hour, high under a day, medium up to a week, else low', () => {
    expect([HOUR - 1, HOUR, DAY_MS, 7 * DAY_MS, 8 * DAY_MS].map(timeToRestoreBand)).toEqual([
      'elite',
      'high',
      'medium',
      'medium',
      'low',
    ]);
  });
});

test('a window is that many days', () => {
  expect(windowMs('7d')).toBe(7 * DAY_MS);
  expect(windowMs('90d')).toBe(90 * DAY_MS);
});

test('the median is the middle value, or the mean of the middle two, and null for none', () => {
  expect(median([5, 1, 3])).toBe(3);
  expect(median([4, 1, 3, 2])).toBe(2.5);
  expect(median([])).toBeNull();
});

describe('lead times', () => {
  const commits = [
    { sha: sha('aaaaaaa1'), committedAt: at(0) },
    { sha: sha('bbbbbbb2'), committedAt: at(2) },
    { sha: sha('ccccccc3'), committedAt: at(4) },
    { sha: sha('ddddddd4'), committedAt: at(6) },
  ];

  test('a deployment carries the commits up to the one it names (by a 7+ digit prefix) not carried before', () => {
    const deployments = [
      { deployedAt: at(3), ref: 'bbbbbbb2' },
      { deployedAt: at(10), ref: sha('ddddddd4') },
    ];
    // a, b by the first (3 h, 1 h); c, d by the second (6 h, 4 h).
    expect(leadTimes(deployments, commits, at(0))).toEqual([3, 1, 6, 4].map((hours) => hours * HOUR));
  });

  test('only deployments from the window start count, though earlier ones still carried their commits', () => {
    const deployments = [
      { deployedAt: at(3), ref: 'bbbbbbb2' },
      { deployedAt: at(10), ref: 'ddddddd4' },
    ];
    expect(leadTimes(deployments, commits, at(5))).toEqual([6 * HOUR, 4 * HOUR]);
  });

  test('a rollback to a carried commit, an unknown sha and an ambiguous prefix carry nothing', () => {
    const ambiguous = [...commits, { sha: sha('ccccccc3ff'), committedAt: at(5) }];
    const deployments = [
      { deployedAt: at(7), ref: 'ddddddd4' },
      { deployedAt: at(8), ref: 'aaaaaaa1' },
      { deployedAt: at(9), ref: 'eeeeeee5' },
      { deployedAt: at(9), ref: 'ccccccc' },
    ];
    expect(leadTimes(deployments, ambiguous, at(0))).toEqual([7, 5, 3, 2, 1].map((hours) => hours * HOUR));
  });
});
