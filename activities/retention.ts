import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { RetentionTable } from '../core/retention/retentionRules';
import { pruneExpiredBatch } from '../core/retention/retentionStore';

export interface PruneTableInput {
  table: RetentionTable;
  keep_days: number;
  batch_size: number;
}

export function createRetentionActivities(db: Knex) {
  return {
    /**
     * Deletes every expired row of one table, a batch per statement until a batch comes back
     * short. Each batch heartbeats its running count: a worker that dies mid-prune is noticed
     * within the heartbeat timeout, and the retry simply carries on, since what is left is
     * still expired. A cancellation (the worker shutting down) stops it between batches.
     */
    async pruneExpiredRows({ table, keep_days, batch_size }: PruneTableInput): Promise<number> {
      const context = Context.current();
      let deleted = 0;
      for (;;) {
        context.cancellationSignal.throwIfAborted();
        const batch = await pruneExpiredBatch(db, table, keep_days, batch_size);
        deleted += batch;
        context.heartbeat({ table, deleted });
        if (batch < batch_size) return deleted;
      }
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
