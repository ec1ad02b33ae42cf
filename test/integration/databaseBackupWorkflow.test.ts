import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { DatabaseBackupActivities } from '../../activities/databaseBackup';
import type { BackupEnd, DatabaseBackupInput, DumpResult } from '../../core/database/types';
import type { databaseBackup } from '../../workflows/databaseBackup';
import { useStubWorker } from '../support/stubWorker';

// The backup workflow on the real dev server with stub activities: each test decides what the
// dump does; the ends the workflow records are kept in memory. No database, no pg_dump.

const DUMPED: DumpResult = { size_bytes: 1234, sha256: 'ab'.repeat(32), duration_ms: 56 };
let dump: () => Promise<DumpResult> = async () => DUMPED;
const ends: BackupEnd[] = [];

const stubs: DatabaseBackupActivities = {
  dumpDatabase: () => dump(),
  async finishBackup(end) {
    ends.push(end);
  },
};

const stub = useStubWorker('backup-wf-test', stubs);
const { taskQueue } = stub;

jest.setTimeout(20_000);

beforeEach(() => {
  ends.length = 0;
  dump = async () => DUMPED;
});

const backUp = (input: Partial<DatabaseBackupInput> = {}) => {
  const full: DatabaseBackupInput = {
    backup_id: randomUUID(),
    tenant_id: randomUUID(),
    file_name: 'test.dump',
    timeout_ms: 10_000,
    heartbeat_timeout_ms: 5_000,
    ...input,
  };
  return {
    full,
    result: stub.client.workflow.execute<typeof databaseBackup>('databaseBackup', {
      taskQueue,
      workflowId: `database-backup-test-${randomUUID()}`,
      args: [full],
    }),
  };
};

test('a dump that succeeds is recorded completed with its size, checksum and duration', async () => {
  const { full, result } = backUp();
  expect(await result).toEqual({ backup_id: full.backup_id, status: 'completed', ...DUMPED });
  expect(ends).toEqual([{ tenant_id: full.tenant_id, backup_id: full.backup_id, status: 'completed', ...DUMPED }]);
});

test('a dump that fails is recorded failed with its error, and not retried', async () => {
  let attempts = 0;
  dump = async () => {
    attempts++;
    throw new Error('pg_dump failed (exit 1): database "nope" does not exist');
  };
  const { full, result } = backUp();
  const failed = {
    backup_id: full.backup_id,
    status: 'failed',
    error: expect.stringContaining('"nope" does not exist'),
  };
  expect(await result).toEqual(failed);
  expect(ends).toEqual([{ tenant_id: full.tenant_id, ...failed }]);
  expect(attempts).toBe(1);
});

test('a dump that stops heartbeating (its worker gone) is recorded failed, not left running', async () => {
  // Silent until cancelled: as a dump whose worker died, it never answers again.
  dump = () =>
    new Promise((_, reject) => {
      const signal = Context.current().cancellationSignal;
      signal.addEventListener('abort', () => reject(new Error('cancelled')));
    });
  const { full, result } = backUp({ heartbeat_timeout_ms: 1_000 });
  expect(await result).toEqual({
    backup_id: full.backup_id,
    status: 'failed',
    error: expect.stringContaining('no heartbeat'),
  });
  expect(ends.map((end) => end.status)).toEqual(['failed']);
});
