// The database's own administration (GET /database/info, /database/connections, backups): what
// the API, the backup workflow and its activities share.

import { SINGLETON_KEY, workflowId } from '../searchAttributes';

export const BACKUP_STATUSES = ['running', 'completed', 'failed'] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];

export interface DatabaseBackup {
  id: string;
  status: BackupStatus;
  /** The dump's name in the backups folder (`<SHIPYARD_DATA>/backups`). */
  file_name: string;
  /** Who started it, as the audit log names them. */
  requested_by: string;
  size_bytes: number | null;
  /** Hex SHA-256 of the dump file, to check a copy before restoring it. */
  sha256: string | null;
  duration_ms: number | null;
  /** Why a failed backup failed. */
  error: string | null;
  started_at: Date;
  completed_at: Date | null;
}

/** Every field of a backup record, as stored and as answered. */
export const BACKUP_FIELDS = [
  'id',
  'status',
  'file_name',
  'requested_by',
  'size_bytes',
  'sha256',
  'duration_ms',
  'error',
  'started_at',
  'completed_at',
] as const satisfies readonly (keyof DatabaseBackup)[];

/** One backup at a time: a second start while one runs is refused (409). */
export const DATABASE_BACKUP_WORKFLOW_ID = workflowId('database-backup', SINGLETON_KEY);

export interface DatabaseBackupInput {
  backup_id: string;
  /** The platform tenant, whose row records the backup. */
  tenant_id: string;
  file_name: string;
  /** How long the dump may run (SHIPYARD_BACKUP_TIMEOUT). */
  timeout_ms: number;
  /** A dump silent this long has lost its worker: the backup fails rather than stay running. */
  heartbeat_timeout_ms: number;
}

/** What a completed dump recorded. */
export interface DumpResult {
  size_bytes: number;
  sha256: string;
  duration_ms: number;
}

export type BackupOutcome =
  ({ backup_id: string; status: 'completed' } & DumpResult) | { backup_id: string; status: 'failed'; error: string };

export type DatabaseBackupWorkflow = (input: DatabaseBackupInput) => Promise<BackupOutcome>;

/** How a backup ends: the row the activity writes from the workflow's outcome. */
export type BackupEnd = { tenant_id: string } & BackupOutcome;

/** Counts of our database's backends by state (`unknown`: a backend the reading role may not inspect). */
export interface DatabaseInfo {
  server_version: string;
  database: string;
  size_bytes: number;
  connections: { total: number; max: number; by_state: Record<string, number> };
}

/** A backend of our database: never its query text, client address or anything a tenant wrote. */
export interface DatabaseConnection {
  pid: number;
  role: string | null;
  application_name: string;
  backend_type: string | null;
  state: string | null;
  backend_start: Date | null;
  wait_event_type: string | null;
  wait_event: string | null;
  /** How long the current query has run; null when the backend is not running one. */
  query_age_seconds: number | null;
}
