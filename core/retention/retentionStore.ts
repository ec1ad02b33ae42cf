import type { Knex } from 'knex';
import type { RetentionTable } from './retentionRules';

/**
 * Deletes up to `batchSize` rows of `table` older than `keepDays`, across every tenant, in one
 * statement; returns how many. Runs as the app role through the prune_expired_rows database
 * function, the one cross-tenant delete there is (see its migration for why).
 */
export async function pruneExpiredBatch(
  db: Knex,
  table: RetentionTable,
  keepDays: number,
  batchSize: number,
): Promise<number> {
  const { rows } = await db.raw<{ rows: { deleted: number }[] }>('select prune_expired_rows(?, ?, ?) as deleted', [
    table,
    keepDays,
    batchSize,
  ]);
  return rows[0].deleted;
}
