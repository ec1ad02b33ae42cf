import type { Knex } from 'knex';
import { getGrading } from '../scorecards/configStore';
import { DEFAULT_GRADING } from '../scorecards/defaults';
import { gradeOf } from '../scorecards/scoringRules';
import type { Grade } from '../scorecards/types';
import { activeFindingsBySeverity, entityGradeCounts } from './findingStore';
import type { FindingSeverity } from './types';

export interface SecurityOverview {
  /** The mean weighted total of the scored entities, graded by the tenant's thresholds; null when none is scored. */
  overall_grade: Grade | null;
  total_entities: number;
  by_grade: Record<Grade | 'ungraded', number>;
  /** Open and acknowledged findings by severity. */
  findings_summary: Record<FindingSeverity, number>;
}

/** The tenant's grades and active findings at a glance (GET /security/overview). */
export async function securityOverview(db: Knex): Promise<SecurityOverview> {
  const [grades, findings, grading] = await Promise.all([
    entityGradeCounts(db),
    activeFindingsBySeverity(db),
    getGrading(db),
  ]);
  // A tenant whose scorecards never ran has no grading row yet: the defaults it would be seeded with.
  const thresholds = grading ?? DEFAULT_GRADING;
  return {
    overall_grade: grades.mean_score === null ? null : gradeOf(grades.mean_score, thresholds),
    total_entities: grades.total_entities,
    by_grade: grades.by_grade,
    findings_summary: findings,
  };
}
