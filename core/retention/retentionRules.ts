import type { Config } from '../config';

/** The tables whose rows expire, as the database's prune_expired_rows function accepts them. */
export const RETENTION_TABLES = ['run_logs', 'audit_log', 'webhook_events'] as const;
export type RetentionTable = (typeof RETENTION_TABLES)[number];

/**
 * Rows per delete statement: each batch is its own short transaction, so pruning a large backlog
 * never holds many locks at once (the database function refuses more than 10,000).
 */
export const PRUNE_BATCH_SIZE = 5_000;

/** The fixed id that makes creating the schedule idempotent: one schedule per namespace. */
export const RETENTION_SCHEDULE_ID = 'shipyard-retention';

/** What one prune applies: the schedule passes it to each run, so the Temporal UI shows it. */
export interface RetentionPolicy {
  keep_days: Record<RetentionTable, number>;
  batch_size: number;
}

/** How many rows a prune deleted, per table: counts only, as they enter workflow history. */
export type PruneCounts = Record<RetentionTable, number>;

/** The retention workflow as the schedule starts it, by name (`pruneRetention`); workflows/retention.ts implements it. */
export type PruneRetentionWorkflow = (policy: RetentionPolicy) => Promise<PruneCounts>;

export function retentionPolicyOf(config: Config): RetentionPolicy {
  return {
    keep_days: {
      run_logs: config.retention.runLogsDays,
      audit_log: config.retention.auditDays,
      webhook_events: config.retention.webhookDays,
    },
    batch_size: PRUNE_BATCH_SIZE,
  };
}
