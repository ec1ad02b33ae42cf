import type { Knex } from 'knex';
import { entityIdOf } from '../catalog/entityStore';
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

/** Upserts a batch's results in one statement. */
export async function writeScores(db: Knex, tenantId: string, scored: ScoredEntity[]): Promise<void> {
  if (scored.length === 0) return;
  await db('entity_scorecards')
    .insert(
      scored.map(({ entity_id, version, result }) => ({
        entity_id,
        tenant_id: tenantId,
        score: result.score,
        grade: result.grade,
        category_scores: JSON.stringify(result.category_scores),
        rule_results: JSON.stringify(result.rule_results),
        entity_version: version,
        evaluated_at: db.fn.now(),
      })),
    )
    .onConflict('entity_id')
    .merge();
}

/** Per entity, the rules it failed at its previous evaluation (entities never scored are absent). */
export async function previousFailures(db: Knex, ids: string[]): Promise<Map<string, Set<string>>> {
  const { rows } = await db.raw<{ rows: { entity_id: string; failed: string[] }[] }>(
    `select entity_id, array(
       select r->>'rule_id' from jsonb_array_elements(rule_results) r where not (r->>'passed')::boolean
     ) as failed
     from entity_scorecards where entity_id = any(?::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.entity_id, new Set(row.failed)]));
}

export interface StoredScorecard {
  score: number;
  grade: Grade;
  category_scores: CategoryScore[];
  rule_results: RuleResult[];
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
  const stored = await readScorecard(db, entityId);
  return {
    entity_id: entityId,
    pending: !stored,
    score: stored?.score ?? null,
    grade: stored?.grade ?? null,
    categories: stored?.category_scores ?? [],
    rules: stored?.rule_results ?? [],
    evaluated_at: stored?.evaluated_at ?? null,
    entity_version: stored?.entity_version ?? null,
  };
}
