import type { Knex } from 'knex';
import { isFinished, markOpenSteps, markRun } from './runStore';
import { RUN_STATUSES } from './types';

// SQL of the reconciliation (runReconciliation.ts): unfinished runs across tenants, and the
// ending of one whose workflow is gone.

/** An unfinished run, as the reconciliation reads them across tenants (the system role). */
export interface UnfinishedRun {
  id: string;
  tenant_id: string;
  workflow_id: string;
  created_at: Date;
}

/** Up to `limit` unfinished runs of every tenant after `after`, oldest first (keyset on created_at, id). */
export function unfinishedRuns(
  system: Knex,
  after: Pick<UnfinishedRun, 'id' | 'created_at'> | undefined,
  limit: number,
): Promise<UnfinishedRun[]> {
  return system('runs')
    .whereIn(
      'status',
      RUN_STATUSES.filter((status) => !isFinished(status)),
    )
    .modify((query) => {
      if (after) query.whereRaw('(created_at, id) > (?, ?)', [after.created_at, after.id]);
    })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'tenant_id', 'workflow_id', 'created_at');
}

/**
 * Ends a run whose workflow is gone: failed with `reason` (cancelled when a cancel had been
 * accepted), the step in progress failed with the same reason and the rest skipped. A run that
 * has already finished is left as it is. Answers whether the run was ended here.
 */
export async function endAbandonedRun(trx: Knex, runId: string, reason: string): Promise<boolean> {
  let outcome = await markRun(trx, runId, 'failed', reason);
  if (outcome === 'cancel-accepted') outcome = await markRun(trx, runId, 'cancelled', reason);
  if (outcome !== 'written') return false;
  await trx('run_steps')
    .where({ run_id: runId })
    .whereIn('status', ['running', 'awaiting_approval'])
    .update({ status: 'failed', error: reason, finished_at: trx.fn.now() });
  await markOpenSteps(trx, runId, 0, 'skipped');
  return true;
}
