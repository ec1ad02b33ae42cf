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
