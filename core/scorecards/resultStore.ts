import type { Knex } from 'knex';
import { entityIdOf } from '../catalog/entityStore';
import { listCategories, listRules } from './configStore';
import { notFound } from '../errors';
import { isoTimestamp } from '../timestamps';
import type { CategoryScore, EntityScore, RuleResult } from './scoringRules';
import type { Grade } from './types';

// entity_scorecards: each entity's latest result, written a batch at a time.

export interface ScoredEntity {
  entity_id: string;
  version: Date;
  result: EntityScore;
}

/**
 * Upserts a batch's results in one statement, the batch as one JSON parameter (a row of
 * placeholders per entity cost more to build and parse than the rows themselves). Results keep
 * ids, outcomes and reasons; names and weights are the configuration's, joined when read (the
 * write is most of a re-score's cost, and it halved without them).
 */
export async function writeScores(db: Knex, scored: ScoredEntity[]): Promise<void> {
  if (scored.length === 0) return;
  const rows = scored.map(({ entity_id, version, result }) => ({
    entity_id,
    version,
    score: result.score,
    grade: result.grade,
    category_scores: result.category_scores.map(({ category_id, score }) => ({ category_id, score })),
    rule_results: result.rule_results.map(({ rule_id, passed, reason }) => ({ rule_id, passed, reason })),
  }));
  await db.raw(
    `insert into entity_scorecards
       (entity_id, tenant_id, score, grade, category_scores, rule_results, entity_version, evaluated_at)
     select r.entity_id, app_current_tenant(), r.score, r.grade, r.category_scores, r.rule_results, r.version, now()
     from jsonb_to_recordset(?::jsonb) as r(entity_id uuid, score numeric, grade text, category_scores jsonb,
       rule_results jsonb, version timestamptz)
     on conflict (entity_id) do update set score = excluded.score, grade = excluded.grade,
       category_scores = excluded.category_scores, rule_results = excluded.rule_results,
       entity_version = excluded.entity_version, evaluated_at = excluded.evaluated_at`,
    [JSON.stringify(rows)],
  );
}

export interface PreviousEvaluation {
  /** The rules the entity failed. */
  failed: Set<string>;
  evaluatedAt: Date;
}

/** Per entity, its previous evaluation (entities never scored are absent). */
export async function previousEvaluations(db: Knex, ids: string[]): Promise<Map<string, PreviousEvaluation>> {
  const { rows } = await db.raw<{ rows: { entity_id: string; failed: string[]; evaluated_at: Date }[] }>(
    `select entity_id, evaluated_at, array(
       select r->>'rule_id' from jsonb_array_elements(rule_results) r where not (r->>'passed')::boolean
     ) as failed
     from entity_scorecards where entity_id = any(?::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.entity_id, { failed: new Set(row.failed), evaluatedAt: row.evaluated_at }]));
}

export interface StoredScorecard {
  score: number;
  grade: Grade;
  category_scores: Pick<CategoryScore, 'category_id' | 'score'>[];
  rule_results: Pick<RuleResult, 'rule_id' | 'passed' | 'reason'>[];
  entity_version: string;
  evaluated_at: string;
}

export const readScorecard = (db: Knex, entityId: string): Promise<StoredScorecard | undefined> =>
  db('entity_scorecards')
    .where({ entity_id: entityId })
    .first(
      db.raw('score::float8 as score'),
      'grade',
      'category_scores',
      'rule_results',
      isoTimestamp(db, 'entity_version', 'entity_version'),
      isoTimestamp(db, 'evaluated_at', 'evaluated_at'),
    );

/**
 * GET /entities/{id}/scorecard: the latest result, or, for an entity not scored yet (just
 * created; the worker scores it within seconds), `pending` with a null grade.
 */
export async function entityScorecard(db: Knex, ref: string) {
  const entityId = await entityIdOf(db, ref);
  if (!entityId) throw notFound('Entity');
  const [stored, categories, rules] = await Promise.all([
    readScorecard(db, entityId),
    listCategories(db),
    listRules(db),
  ]);
  // A rule or category deleted since the evaluation is left out: its re-score is already queued.
  const categoryOf = new Map(categories.map((category) => [category.id, category]));
  const ruleOf = new Map(rules.map((rule) => [rule.id, rule]));
  return {
    entity_id: entityId,
    pending: !stored,
    score: stored?.score ?? null,
    grade: stored?.grade ?? null,
    categories: (stored?.category_scores ?? []).flatMap(({ category_id, score }) => {
      const category = categoryOf.get(category_id);
      return category ? [{ category_id, name: category.name, weight: category.weight, score }] : [];
    }),
    rules: (stored?.rule_results ?? []).flatMap(({ rule_id, passed, reason }) => {
      const rule = ruleOf.get(rule_id);
      return rule
        ? [{ rule_id, name: rule.name, category_id: rule.category_id, weight: rule.weight, passed, reason }]
        : [];
    }),
    evaluated_at: stored?.evaluated_at ?? null,
    entity_version: stored?.entity_version ?? null,
  };
}
