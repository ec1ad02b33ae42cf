import { invalid } from '../errors';
import { evaluateCheck, type Check, type EntityFacts } from './checks';
import type { Grade, GradingThresholds } from './types';

// How rule results become a score and a grade: pure, so the workflow's activity, the bench and
// the unit tests share it.

export interface ScoredCategory {
  id: string;
  name: string;
  weight: number;
}

export interface ScoredRule {
  id: string;
  name: string;
  category_id: string;
  weight: number;
  check: Check;
}

export interface RuleResult {
  rule_id: string;
  name: string;
  category_id: string;
  weight: number;
  passed: boolean;
  reason: string;
}

export interface CategoryScore {
  category_id: string;
  name: string;
  weight: number;
  score: number;
}

export interface EntityScore {
  score: number;
  grade: Grade;
  category_scores: CategoryScore[];
  rule_results: RuleResult[];
}

const THRESHOLD_ORDER = ['a_plus', 'a', 'b', 'c', 'd'] as const;
const GRADE_OF_THRESHOLD = { a_plus: 'A+', a: 'A', b: 'B', c: 'C', d: 'D' } as const;

/** Thresholds must fall strictly from A+ to D, within 0-100: otherwise a grade could never be given. */
export function assertThresholds(thresholds: GradingThresholds): void {
  const details = [];
  if (thresholds.a_plus > 100) details.push({ field: 'a_plus', message: 'must be at most 100' });
  if (thresholds.d < 0) details.push({ field: 'd', message: 'must be at least 0' });
  for (let i = 1; i < THRESHOLD_ORDER.length; i++) {
    const [higher, lower] = [THRESHOLD_ORDER[i - 1], THRESHOLD_ORDER[i]];
    if (thresholds[lower] >= thresholds[higher]) {
      details.push({ field: lower, message: `must be below ${higher} (${thresholds[higher]})` });
    }
  }
  if (details.length > 0) throw invalid('Grading thresholds must decrease strictly from a_plus to d', details);
}

export function gradeOf(score: number, thresholds: GradingThresholds): Grade {
  for (const name of THRESHOLD_ORDER) if (score >= thresholds[name]) return GRADE_OF_THRESHOLD[name];
  return 'F';
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * Scores one entity: a category's score is the weighted share (0-100) of its rules that pass; the
 * total is the categories' scores weighted by category weight. A category without rules counts
 * for nothing; an entity with no rules at all scores 100 (nothing failed).
 */
export function scoreEntity(
  categories: ScoredCategory[],
  rules: ScoredRule[],
  grading: GradingThresholds,
  facts: EntityFacts,
  now: Date,
): EntityScore {
  const rule_results = rules.map((rule) => ({
    rule_id: rule.id,
    name: rule.name,
    category_id: rule.category_id,
    weight: rule.weight,
    ...evaluateCheck(rule.check, facts, now),
  }));
  const category_scores: CategoryScore[] = [];
  let weighted = 0;
  let totalWeight = 0;
  for (const category of categories) {
    const own = rule_results.filter((result) => result.category_id === category.id);
    if (own.length === 0) continue;
    const all = own.reduce((sum, result) => sum + result.weight, 0);
    const passing = own.reduce((sum, result) => sum + (result.passed ? result.weight : 0), 0);
    const score = (100 * passing) / all;
    category_scores.push({
      category_id: category.id,
      name: category.name,
      weight: category.weight,
      score: round2(score),
    });
    weighted += category.weight * score;
    totalWeight += category.weight;
  }
  const score = totalWeight === 0 ? 100 : round2(weighted / totalWeight);
  return { score, grade: gradeOf(score, grading), category_scores, rule_results };
}
