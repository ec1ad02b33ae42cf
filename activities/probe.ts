import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { hostname } from 'node:os';

export interface ProbeRecord {
  pool: string;
  task_queue: string;
  worker_identity: string;
  probed_at: string;
}

export function createProbeActivities(db: Knex) {
  return {
    /** Records, as the app role, that this worker answered for its pool. */
    async recordProbe(pool: string): Promise<ProbeRecord> {
      // Temporal's own default worker identity format.
      const workerIdentity = `${process.pid}@${hostname()}`;
      // One row per pool, overwritten: the table records the last answer, it does not grow.
      const [row] = await db('worker_probes')
        .insert({ pool, worker_identity: workerIdentity, probed_at: db.fn.now() })
        .onConflict('pool')
        .merge()
        .returning(['probed_at']);
      return {
        pool,
        task_queue: Context.current().info.taskQueue,
        worker_identity: workerIdentity,
        probed_at: new Date(row.probed_at).toISOString(),
      };
    },
  };
}

export type ProbeActivities = ReturnType<typeof createProbeActivities>;
