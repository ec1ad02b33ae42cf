import type { Knex } from 'knex';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import {
  BACKUP_FIELDS,
  type BackupEnd,
  type DatabaseBackup,
  type DatabaseConnection,
  type DatabaseInfo,
} from './types';

// SQL of /database/*. The server's statistics are read through the system role, on its pool with
// the API's statement timeout; only our own database's backends are shown, and never what they
// run (pg_stat_activity.query) or where from (client_addr): those would show other tenants' data.

/** Version, size and connection counts by state. */
export async function readDatabaseInfo(system: Knex): Promise<DatabaseInfo> {
  const [facts, states] = await Promise.all([
    system.raw<{ rows: { server_version: string; database: string; size_bytes: string; max: number }[] }>(
      `select current_setting('server_version') as server_version, current_database() as database,
              pg_database_size(current_database()) as size_bytes,
              current_setting('max_connections')::int as max`,
    ),
    system.raw<{ rows: { state: string; count: number }[] }>(
      `select coalesce(state, 'unknown') as state, count(*)::int as count
         from pg_stat_activity where datname = current_database() group by 1 order by 1`,
    ),
  ]);
  const { server_version, database, size_bytes, max } = facts.rows[0];
  const byState = Object.fromEntries(states.rows.map(({ state, count }) => [state, count]));
  return {
    server_version,
    database,
    size_bytes: Number(size_bytes),
    connections: { total: states.rows.reduce((sum, { count }) => sum + count, 0), max, by_state: byState },
  };
}

/** Every backend of our database, oldest first (at most max_connections rows). */
export async function listConnections(system: Knex): Promise<DatabaseConnection[]> {
  const { rows } = await system.raw<{ rows: DatabaseConnection[] }>(
    `select pid, usename as role, application_name, backend_type, state, backend_start,
            wait_event_type, wait_event,
            case when state = 'active'
                 then round(extract(epoch from clock_timestamp() - query_start), 3)::float8 end as query_age_seconds
       from pg_stat_activity
      where datname = current_database()
      order by backend_start nulls last, pid`,
  );
  return rows;
}

type BackupRow = Omit<DatabaseBackup, 'size_bytes'> & { size_bytes: string | null };

const toBackup = (row: BackupRow): DatabaseBackup => ({
  ...row,
  size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
});

export async function insertBackup(
  trx: Knex,
  backup: { id: string; tenant_id: string; file_name: string; requested_by: string },
): Promise<DatabaseBackup> {
  const [row] = await trx('database_backups').insert(backup).returning<BackupRow[]>(BACKUP_FIELDS);
  return toBackup(row);
}

export async function deleteBackup(trx: Knex, id: string): Promise<void> {
  await trx('database_backups').where({ id }).delete();
}

/**
 * Records how a backup ended. Its workflow's word is final, even over `failOrphanedBackups`,
 * which may have counted it ended while it was still being started.
 */
export async function finishBackup(trx: Knex, end: BackupEnd): Promise<void> {
  const result =
    end.status === 'completed'
      ? { size_bytes: end.size_bytes, sha256: end.sha256, duration_ms: end.duration_ms }
      : { error: end.error };
  await trx('database_backups')
    .where({ id: end.backup_id })
    .update({ status: end.status, ...result, completed_at: trx.fn.now() });
}

/**
 * Fails the backups still `running` but `current`: only one backup workflow runs at a time, so
 * once `current`'s has started, theirs has ended without recording it (terminated by hand, say).
 */
export async function failOrphanedBackups(trx: Knex, current: string): Promise<void> {
  await trx('database_backups')
    .where({ status: 'running' })
    .whereNot({ id: current })
    .update({ status: 'failed', error: 'its workflow ended without recording an outcome', completed_at: trx.fn.now() });
}

const NEWEST_FIRST: KeysetOrder = {
  columns: [
    { column: 'started_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'desc',
};

const backupPage = keysetStatement({
  order: NEWEST_FIRST,
  build: (q) => q('database_backups').select(BACKUP_FIELDS),
  toItem: toBackup,
});

/** A page of the backups, newest first. */
export function listBackups(db: Knex, window: KeysetWindow): Promise<KeysetRow<DatabaseBackup>[]> {
  return backupPage(db, window);
}
