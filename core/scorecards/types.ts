import { invalid } from '../errors';

// The scorecards' vocabularies, held to the migration's CHECK constraints by
// test/integration/vocabulary.test.ts.

/** Most severe first. */
export const FINDING_SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** Best first; F is below the lowest threshold. */
export const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'] as const;
export type Grade = (typeof GRADES)[number];

/** The lowest weighted total (0-100) of each grade but F. */
export interface GradingThresholds {
  a_plus: number;
  a: number;
  b: number;
  c: number;
  d: number;
}

/**
 * The grades of a `grade=A+,B` filter. A `+` left unescaped in a query string arrives as a space,
 * so `A ` reads as A+; anything else that is not a grade is a 400 naming the filter.
 */
export function gradeList(list: string | undefined): Grade[] | undefined {
  if (list === undefined) return undefined;
  const grades = list.split(',').map((raw) => (raw === 'A ' || raw.trim() === 'A+' ? 'A+' : raw.trim()));
  const unknown = grades.filter((grade) => !(GRADES as readonly string[]).includes(grade));
  if (unknown.length > 0)
    throw invalid('Unknown grade', [{ field: 'grade', message: `must list grades among ${GRADES.join(', ')}` }]);
  return [...new Set(grades as Grade[])];
}
