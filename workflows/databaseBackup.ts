import { ActivityFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { DatabaseBackupActivities } from '../activities/databaseBackup';
import type { BackupOutcome, DatabaseBackupInput, DatabaseBackupWorkflow } from '../core/database/types';

const { finishBackup } = proxyActivities<DatabaseBackupActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20 },
});

/** Why the dump failed, in words an operator can act on. */
function failureOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) {
    return `the dump stopped answering (${cause.timeoutType === 'HEARTBEAT' ? 'no heartbeat' : 'ran out of time'}): its worker may have stopped`;
  }
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * One database backup: pg_dump on a platform worker, then its record. The dump heartbeats while
 * it runs; a worker that dies takes its heartbeats with it, so the dump times out and the backup
 * is recorded `failed` (never left `running`). A dump is not retried: the operator sees the
 * failure and starts another. Its fixed workflow id makes it one at a time.
 */
export async function databaseBackup(input: DatabaseBackupInput): Promise<BackupOutcome> {
  const { dumpDatabase } = proxyActivities<DatabaseBackupActivities>({
    startToCloseTimeout: input.timeout_ms,
    heartbeatTimeout: input.heartbeat_timeout_ms,
    retry: { maximumAttempts: 1 },
  });
  let outcome: BackupOutcome;
  try {
    outcome = {
      backup_id: input.backup_id,
      status: 'completed',
      ...(await dumpDatabase({ file_name: input.file_name })),
    };
  } catch (err) {
    outcome = { backup_id: input.backup_id, status: 'failed', error: failureOf(err) };
  }
  await finishBackup({ tenant_id: input.tenant_id, ...outcome });
  return outcome;
}

databaseBackup satisfies DatabaseBackupWorkflow;
