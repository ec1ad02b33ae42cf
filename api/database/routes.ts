import { startBackup } from '../../core/database/commands';
import { listBackups, listConnections, readDatabaseInfo } from '../../core/database/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { backupListSchema, backupSchema, backupsQuery, connectionsSchema, databaseInfoSchema } from './schemas';

// The database itself serves every tenant: its statistics and backups are platform operators'
// alone. The statistics are read through the system role's pool (its statement timeout bounds
// them); backups are records of the platform tenant, the operator's own.

const TAG = 'Database';

export const databaseRoutes = [
  defineRoute({
    method: 'GET',
    path: '/database/info',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary: "PostgreSQL's version, the database's size and its connections counted by state",
    responses: { 200: { description: 'DatabaseInfo', schema: databaseInfoSchema } },
    handler: ({ deps }) => readDatabaseInfo(deps.system),
  }),
  defineRoute({
    method: 'GET',
    path: '/database/connections',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary:
      "Every backend of this database: pid, role, state, application name, start, wait event and the current query's age. Never the query's text or the client's address",
    responses: { 200: { description: '`{connections}`', schema: connectionsSchema } },
    handler: async ({ deps }) => ({ connections: await listConnections(deps.system) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/database/backup',
    tag: TAG,
    access: 'operator',
    transaction: 'on-demand',
    summary:
      'Starts a backup: pg_dump (custom format) into the backups folder, in a Temporal workflow on the platform pool. 201 with the backup `running`; its size, checksum and outcome follow in GET /database/backups. One at a time: 409 while one runs',
    responses: {
      201: { description: 'The backup, running', schema: backupSchema },
      409: { description: 'A backup is already running' },
      503: { description: 'The workflow service is unreachable; nothing was started' },
    },
    handler: ({ deps, auth, inTenant }) => startBackup(inTenant, deps.temporal, auth, deps.config.backups.timeoutMs),
  }),
  defineRoute({
    method: 'GET',
    path: '/database/backups',
    tag: TAG,
    access: 'operator',
    summary: 'The backups, newest first: status, file, size, SHA-256, duration and, when one failed, why',
    query: backupsQuery,
    responses: { 200: { description: '`{backups, next_cursor}`', schema: backupListSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listBackups(db, window), window);
      return { backups: page.items, next_cursor: page.next_cursor };
    },
  }),
];
