import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { ensureDefaults, loadScoringConfig } from './configStore';
import { entityIdsAfter, factsOf, type EntityFactsRow } from './factsStore';
import { claimQueued } from './queueStore';
import { previousEvaluations, writeScores } from './resultStore';
import { SCORECARD_ACTOR, syncFindings } from './findingSync';
import { scoreEntity } from './scoringRules';

// Scoring a batch of one tenant's entities: the facts in one query, the configuration once, the
// results in one upsert, the findings of the rule results that changed, all in one transaction
// with the claim of the queue rows, so a failed batch is retried whole.

async function scoreFacts(trx: Knex, tenantId: string, facts: EntityFactsRow[]): Promise<void> {
  if (facts.length === 0) return;
  const { categories, rules, grading } = await loadScoringConfig(trx);
  const now = new Date();
  const scored = facts.map((entity) => ({
    entity_id: entity.id,
    version: entity.version,
    result: scoreEntity(categories, rules, grading, entity, now),
  }));
  // Read before the write replaces them: which rule results changed.
  const findingRules = rules.filter((rule) => rule.severity);
  const before =
    findingRules.length > 0
      ? await previousEvaluations(
          trx,
          facts.map((entity) => entity.id),
        )
      : new Map();
  await writeScores(trx, scored);
  await syncFindings(trx, SCORECARD_ACTOR(tenantId), findingRules, scored, before);
}

export interface QueuedBatchResult {
  scored: number;
  /** A queued row asked for the whole tenant. */
  full: boolean;
  /** More rows wait in the tenant's queue. */
  more: boolean;
}

/** Scores the entities of the tenant's next `limit` queued rows. */
export function scoreQueuedBatch(db: Knex, tenantId: string, limit: number): Promise<QueuedBatchResult> {
  return withTenant(db, tenantId, async (trx) => {
    await ensureDefaults(trx, tenantId);
    const { entityIds, full, more } = await claimQueued(trx, limit);
    const facts = await factsOf(trx, entityIds);
    await scoreFacts(trx, tenantId, facts);
    return { scored: facts.length, full, more };
  });
}

/**
 * Scores the tenant's next `limit` entities after `afterId` in id order, in `concurrency`
 * transactions side by side over consecutive slices (a pass is mostly database work, which one
 * connection leaves half idle). `last_id` null: the pass is done.
 */
export async function scoreRangeBatch(
  db: Knex,
  tenantId: string,
  afterId: string | null,
  limit: number,
  concurrency: number,
): Promise<{ scored: number; last_id: string | null }> {
  const ids = await withTenant(db, tenantId, async (trx) => {
    await ensureDefaults(trx, tenantId);
    return entityIdsAfter(trx, afterId, limit);
  });
  const size = Math.ceil(ids.length / concurrency);
  const slices = Array.from({ length: concurrency }, (_, i) => ids.slice(i * size, (i + 1) * size));
  const scored = await Promise.all(
    slices
      .filter((slice) => slice.length > 0)
      .map((slice) =>
        withTenant(db, tenantId, async (trx) => {
          const facts = await factsOf(trx, slice);
          await scoreFacts(trx, tenantId, facts);
          return facts.length;
        }),
      ),
  );
  return {
    scored: scored.reduce((sum, count) => sum + count, 0),
    last_id: ids.length === limit ? ids[ids.length - 1] : null,
  };
}
