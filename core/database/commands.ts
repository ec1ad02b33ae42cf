import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { Knex } from 'knex';
import { actorOf, recordAudit } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { ApiError, conflict } from '../errors';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { deleteBackup, failOrphanedBackups, insertBackup } from './store';
import {
  DATABASE_BACKUP_WORKFLOW_ID,
  type DatabaseBackup,
  type DatabaseBackupInput,
  type DatabaseBackupWorkflow,
} from './types';

/** How long a dump may go without a heartbeat before its workflow counts it failed (a worker gone). */
export const BACKUP_HEARTBEAT_TIMEOUT_MS = 30_000;

/** `shipyard-2026-11-28T10-00-00-000Z-1a2b3c4d.dump`: sorts by time, never collides. */
const dumpFileName = (id: string, at: Date) =>
  `shipyard-${at.toISOString().replace(/[:.]/g, '-')}-${id.slice(0, 8)}.dump`;

/**
 * Records a running backup and starts its workflow on the platform pool. The row commits first,
 * so the workflow always finds it; when the workflow cannot start (one already runs: 409; Temporal
 * unreachable: 503) the row goes again. `inTenant` runs in the caller's (the platform) tenant.
 */
export async function startBackup(
  inTenant: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>,
  temporal: TemporalClient,
  caller: CallerPrincipal,
  timeoutMs: number,
): Promise<DatabaseBackup> {
  const id = randomUUID();
  const backup = await inTenant((trx) =>
    insertBackup(trx, {
      id,
      tenant_id: caller.tenantId,
      file_name: dumpFileName(id, new Date()),
      requested_by: actorOf(caller).actor,
    }),
  );
  const input: DatabaseBackupInput = {
    backup_id: id,
    tenant_id: caller.tenantId,
    file_name: backup.file_name,
    timeout_ms: timeoutMs,
    heartbeat_timeout_ms: BACKUP_HEARTBEAT_TIMEOUT_MS,
  };
  try {
    await temporal.workflow.start<DatabaseBackupWorkflow>('databaseBackup', {
      taskQueue: TASK_QUEUES.platform,
      workflowId: DATABASE_BACKUP_WORKFLOW_ID,
      args: [input],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'database-backup', tenantId: caller.tenantId }),
    });
  } catch (err) {
    await inTenant((trx) => deleteBackup(trx, id));
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw conflict('A backup is already running');
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'The backup could not be started (the workflow service is unreachable)',
      [],
      {
        'Retry-After': '5',
      },
    );
  }
  await inTenant(async (trx) => {
    await failOrphanedBackups(trx, id);
    await recordAudit(trx, caller, {
      eventType: 'database.backup_started',
      action: 'Start a database backup',
      targetType: 'database_backup',
      targetId: id,
      metadata: { file_name: backup.file_name },
    });
  });
  return backup;
}
