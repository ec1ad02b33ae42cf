import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities, ProbeRecord } from '../activities/probe';

const { recordProbe } = proxyActivities<ProbeActivities>({
  startToCloseTimeout: '5 seconds',
  retry: { maximumAttempts: 2 },
});

/**
 * The smallest complete round trip: started by the API on a pool's task queue, run by that
 * pool's worker, whose activity writes to the database. /system runs one per pool.
 */
export async function workerProbe(pool: string): Promise<ProbeRecord> {
  return recordProbe(pool);
}
