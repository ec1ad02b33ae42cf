import Ajv from 'ajv';
import { checkSchema, evaluateCheck, type Check, type EntityFacts } from '../../core/scorecards/checks';
import { assertThresholds, gradeOf, scoreEntity } from '../../core/scorecards/scoringRules';

const now = new Date('2026-12-01T12:00:00.000Z');
const daysAgo = (n: number) => new Date(now.getTime() - n * 86_400_000);

const bare: EntityFacts = {
  owner: null,
  description: null,
  tier: null,
  lifecycle: null,
  tags: [],
  linkCount: 0,
  hasReadme: false,
  hasCrawledDocs: false,
  deprecatedDependencies: [],
  lastWorkloadSeenAt: null,
  worstOpenFinding: null,
  busFactor: null,
};
const full: EntityFacts = {
  ...bare,
  owner: 'team-a',
  description: 'Payments',
  tier: 'tier1',
  lifecycle: 'production',
  tags: ['pci'],
  linkCount: 3,
  hasReadme: true,
  lastWorkloadSeenAt: daysAgo(1),
};

test.each<[string, Check, EntityFacts, EntityFacts, RegExp]>([
  ['field_set', { kind: 'field_set', field: 'owner' }, full, { ...full, owner: '  ' }, /owner is not set/],
  ['tag_present', { kind: 'tag_present', tag: 'pci' }, full, bare, /tag pci is missing/],
  ['min_links', { kind: 'min_links', count: 2 }, full, { ...full, linkCount: 1 }, /1 links, fewer than 2/],
  ['has_docs (README)', { kind: 'has_docs' }, full, bare, /no README and no docs/],
  ['has_docs (crawled)', { kind: 'has_docs' }, { ...bare, hasCrawledDocs: true }, bare, /no README/],
  [
    'no_deprecated_dependencies',
    { kind: 'no_deprecated_dependencies' },
    full,
    { ...full, deprecatedDependencies: ['old-db'] },
    /deprecated old-db/,
  ],
  [
    'lifecycle_in',
    { kind: 'lifecycle_in', values: ['production'] },
    full,
    { ...full, lifecycle: 'experimental' },
    /lifecycle experimental, expected one of production/,
  ],
  [
    'workload_seen_within',
    { kind: 'workload_seen_within', days: 7 },
    full,
    { ...full, lastWorkloadSeenAt: daysAgo(8) },
    /last seen 8 days ago/,
  ],
  ['workload_seen_within (never)', { kind: 'workload_seen_within', days: 7 }, full, bare, /no workload/],
  [
    'no_open_finding_above',
    { kind: 'no_open_finding_above', severity: 'medium' },
    { ...full, worstOpenFinding: 'medium' },
    { ...full, worstOpenFinding: 'high' },
    /open high finding, above medium/,
  ],
  [
    'bus_factor (min)',
    { kind: 'bus_factor', min: 2 },
    { ...full, busFactor: 2 },
    { ...full, busFactor: 1 },
    /bus factor 1, below 2/,
  ],
  [
    'bus_factor (max)',
    { kind: 'bus_factor', max: 3 },
    { ...full, busFactor: 3 },
    { ...full, busFactor: 4 },
    /bus factor 4, above 3/,
  ],
  ['bus_factor (none)', { kind: 'bus_factor', min: 2 }, { ...full, busFactor: 5 }, bare, /no bus factor: no commits/],
])('%s passes on the passing facts and fails with its reason on the failing ones', (_, check, ok, bad, reason) => {
  expect(evaluateCheck(check, ok, now).passed).toBe(true);
  const failed = evaluateCheck(check, bad, now);
  expect(failed.passed).toBe(false);
  expect(failed.reason).toMatch(reason);
});

test('the check schema accepts each kind with its fields and names the wrong field of a bad one', () => {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(checkSchema);
  expect(validate({ kind: 'min_links', count: 2 })).toBe(true);
  expect(validate({ kind: 'has_docs' })).toBe(true);
  expect(validate({ kind: 'min_links', count: 0 })).toBe(false);
  expect(validate.errors?.map((e) => `${e.instancePath} ${e.message}`)).toContain('/count must be >= 1');
  // Only the errors of its own kind: nothing about tags or severities.
  expect(validate.errors?.some((e) => /tag|severity/.test(e.instancePath))).toBe(false);
  expect(validate({ kind: 'run_script', script: 'rm -rf /' })).toBe(false);
  expect(validate({ kind: 'has_docs', extra: 1 })).toBe(false);
  expect(validate({ kind: 'bus_factor', min: 2, max: 5 })).toBe(true);
  expect(validate({ kind: 'bus_factor' })).toBe(false); // neither bound
  expect(validate({ kind: 'bus_factor', min: 0 })).toBe(false);
});

const grading = { a_plus: 95, a: 85, b: 70, c: 55, d: 40 };

test('grades follow the thresholds, F below d', () => {
  expect(gradeOf(100, grading)).toBe('A+');
  expect(gradeOf(95, grading)).toBe('A+');
  expect(gradeOf(94.99, grading)).toBe('A');
  expect(gradeOf(70, grading)).toBe('B');
  expect(gradeOf(40, grading)).toBe('D');
  expect(gradeOf(39.9, grading)).toBe('F');
});

test('thresholds that do not decrease strictly are refused, naming the field', () => {
  expect(() => assertThresholds(grading)).not.toThrow();
  expect(() => assertThresholds({ ...grading, b: 85 })).toThrow(/decrease strictly/);
  try {
    assertThresholds({ ...grading, c: 75 });
  } catch (err) {
    expect((err as { details: { field: string }[] }).details.map((d) => d.field)).toEqual(['c']);
  }
});

test('a category scores the weighted share of its passing rules; the total weights the categories', () => {
  const categories = [
    { id: 'own', name: 'Ownership', weight: 3 },
    { id: 'docs', name: 'Documentation', weight: 1 },
    { id: 'empty', name: 'Empty', weight: 10 },
  ];
  const rules = [
    { id: 'r1', name: 'owner', category_id: 'own', weight: 3, check: { kind: 'field_set', field: 'owner' } as const },
    { id: 'r2', name: 'tier', category_id: 'own', weight: 1, check: { kind: 'field_set', field: 'tier' } as const },
    { id: 'r3', name: 'docs', category_id: 'docs', weight: 1, check: { kind: 'has_docs' } as const },
  ];
  const result = scoreEntity(categories, rules, grading, { ...bare, owner: 'team-a' }, now);
  expect(result.category_scores).toEqual([
    { category_id: 'own', name: 'Ownership', weight: 3, score: 75 },
    { category_id: 'docs', name: 'Documentation', weight: 1, score: 0 },
  ]);
  expect(result.score).toBe(56.25);
  expect(result.grade).toBe('C');
  expect(result.rule_results.map((r) => r.passed)).toEqual([true, false, false]);
  expect(scoreEntity(categories, [], grading, bare, now)).toMatchObject({ score: 100, grade: 'A+' });
});
