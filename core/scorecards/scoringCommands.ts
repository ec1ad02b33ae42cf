import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { ensureDefaults, loadScoringConfig } from './configStore';
import { factsAfter, factsOf, type EntityFactsRow } from './factsStore';
import { claimQueued } from './queueStore';
import { previousFailures, writeScores } from './resultStore';
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
      ? await previousFailures(
          trx,
          facts.map((entity) => entity.id),
        )
      : new Map();
  await writeScores(trx, tenantId, scored);
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

/** Scores the tenant's next `limit` entities after `afterId` in id order; `last_id` null: the pass is done. */
export function scoreRangeBatch(
  db: Knex,
  tenantId: string,
  afterId: string | null,
  limit: number,
): Promise<{ scored: number; last_id: string | null }> {
  return withTenant(db, tenantId, async (trx) => {
    await ensureDefaults(trx, tenantId);
    const facts = await factsAfter(trx, afterId, limit);
    await scoreFacts(trx, tenantId, facts);
    return { scored: facts.length, last_id: facts.length === limit ? facts[facts.length - 1].id : null };
  });
}
