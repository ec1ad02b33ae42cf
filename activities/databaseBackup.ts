import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Config } from '../core/config';
import { finishBackup } from '../core/database/store';
import type { BackupEnd, DumpResult } from '../core/database/types';
import { withTenant } from '../db/tenancy';
import { locatePgDump, runPgDump } from './pgDump';

export function createDatabaseBackupActivities(deps: { db: Knex; config: Config }) {
  return {
    /** pg_dump of the whole database into the backups folder, heartbeating while it runs. */
    async dumpDatabase({ file_name }: { file_name: string }): Promise<DumpResult> {
      const context = Context.current();
      const backups = deps.config.backups;
      const pgDump = await locatePgDump(backups.pgDump);
      return runPgDump({ ...backups, pgDump }, file_name, {
        heartbeat: () => context.heartbeat(),
        signal: context.cancellationSignal,
      });
    },
    /** Records how the backup ended, in the platform tenant's row. */
    async finishBackup(end: BackupEnd): Promise<void> {
      await withTenant(deps.db, end.tenant_id, (trx) => finishBackup(trx, end));
    },
  };
}

export type DatabaseBackupActivities = ReturnType<typeof createDatabaseBackupActivities>;
