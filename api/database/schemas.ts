import { BACKUP_FIELDS, BACKUP_STATUSES } from '../../core/database/types';
import { keysetListQuery, keysetPageSchema } from '../http/pagination';

// Response schemas of /database/* (api/database/routes.ts): counts and backend facts only, never
// a query's text, a client's address or anything a tenant wrote.

const nullableString = { type: ['string', 'null'] } as const;

export const databaseInfoSchema = {
  type: 'object',
  required: ['server_version', 'database', 'size_bytes', 'connections'],
  properties: {
    server_version: { type: 'string', description: "PostgreSQL's version, e.g. `15.18 (Debian 15.18-0+deb12u1)`" },
    database: { type: 'string', description: "The database's name" },
    size_bytes: { type: 'integer', description: 'Its size on disk (pg_database_size)' },
    connections: {
      type: 'object',
      required: ['total', 'max', 'by_state'],
      properties: {
        total: { type: 'integer', description: "Backends connected to this database, every process's" },
        max: { type: 'integer', description: "The server's max_connections, for every database together" },
        by_state: {
          type: 'object',
          additionalProperties: { type: 'integer' },
          description:
            '`active`, `idle`, `idle in transaction`, …; `unknown` for backends the reading role may not inspect (see docs/operations.md)',
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const connectionsSchema = {
  type: 'object',
  required: ['connections'],
  properties: {
    connections: {
      type: 'array',
      description: 'Every backend of this database, oldest first',
      items: {
        type: 'object',
        required: [
          'pid',
          'role',
          'application_name',
          'backend_type',
          'state',
          'backend_start',
          'wait_event_type',
          'wait_event',
          'query_age_seconds',
        ],
        properties: {
          pid: { type: 'integer' },
          role: nullableString,
          application_name: { type: 'string' },
          backend_type: nullableString,
          state: { ...nullableString, description: 'null when the reading role may not inspect the backend' },
          backend_start: { type: ['string', 'null'], format: 'date-time' },
          wait_event_type: nullableString,
          wait_event: nullableString,
          query_age_seconds: {
            type: ['number', 'null'],
            description: 'How long the current query has run; null unless the backend is active',
          },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const backupSchema = {
  type: 'object',
  required: BACKUP_FIELDS,
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: BACKUP_STATUSES },
    file_name: { type: 'string', description: 'The dump in the backups folder (SHIPYARD_BACKUP_DIR)' },
    requested_by: { type: 'string', description: 'Who started it, as the audit log names them' },
    size_bytes: { type: ['integer', 'null'] },
    sha256: { ...nullableString, description: "Hex SHA-256 of the dump, to check a copy's integrity" },
    duration_ms: { type: ['integer', 'null'] },
    error: { ...nullableString, description: 'Why a failed backup failed' },
    started_at: { type: 'string', format: 'date-time' },
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
  additionalProperties: false,
} as const;

export const backupsQuery = {
  type: 'object',
  properties: keysetListQuery(),
  additionalProperties: false,
} as const;

export const backupListSchema = keysetPageSchema('backups', backupSchema);
