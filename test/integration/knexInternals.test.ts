import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import type { QueryResult } from 'pg';
import { acquireConnection, knexOnConnection, releaseConnection, sendOn } from '../../db/knexInternals';
import { createPool } from '../../db/pool';
import { testConfig } from '../support/harness';

// Guards db/knexInternals.ts, the one module that relies on knex's undocumented internals: each
// test fails when a knex upgrade changes one of them (the version pin first, so an upgrade is
// a decision, then each internal by what it must do).
const db = createPool(testConfig().database.appUrl, 2);
afterAll(() => db.destroy());

const backendPid = async (run: Knex) => (await run.raw('select pg_backend_pid() as pid')).rows[0].pid as number;

/** Runs `work` in a transaction with a knex on one held connection, and that connection's backend pid. */
async function onHeldConnection<T>(work: (trx: Knex.Transaction, pid: number) => Promise<T>): Promise<T> {
  const connection = await acquireConnection(db);
  try {
    const sent = await sendOn(db, connection, 'select pg_backend_pid() as pid');
    const { pid } = (sent as QueryResult).rows[0] as { pid: number };
    await sendOn(db, connection, 'begin;');
    try {
      return await work(
        knexOnConnection(db, connection, () => {}, Promise.resolve()),
        pid,
      );
    } finally {
      await sendOn(db, connection, 'ROLLBACK;');
    }
  } finally {
    await releaseConnection(db, connection);
  }
}

test('knex is pinned exactly, to the version installed: upgrading it means revisiting db/knexInternals.ts', () => {
  const root = path.join(__dirname, '..', '..');
  const pinned = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).dependencies.knex;
  const installed = JSON.parse(readFileSync(require.resolve('knex/package.json'), 'utf8')).version;
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  expect(installed).toBe(pinned);
});

test("the connection knex hands out is a pg client: sendOn answers with pg's result, and knex's query event reports it", async () => {
  const connection = await acquireConnection(db);
  const reported: string[] = [];
  const record = ({ sql }: { sql: string }) => reported.push(sql);
  db.on('query', record);
  try {
    const sent = await sendOn(db, connection, 'begin; select 1 as one');
    const ended = await sendOn(db, connection, 'COMMIT;');
    expect(sent).toEqual(expect.arrayContaining([expect.objectContaining({ command: 'SELECT', rows: [{ one: 1 }] })]));
    expect(ended).toEqual(expect.objectContaining({ command: 'COMMIT' }));
    expect(reported).toEqual(['begin; select 1 as one', 'COMMIT;']);
  } finally {
    db.off('query', record);
    await releaseConnection(db, connection);
  }
});

test("a knex on a connection runs builders, raw statements and a nested transaction's savepoint on that connection", async () => {
  const pids = await onHeldConnection(async (trx, pid) => {
    const builder = (await trx.select(trx.raw('pg_backend_pid() as pid')).first()) as { pid: number };
    const raw = await backendPid(trx);
    const nested = await trx.transaction((inner) => backendPid(inner));
    return { pid, seen: [builder.pid, raw, nested] };
  });
  expect(pids.seen).toEqual([pids.pid, pids.pid, pids.pid]);
});

test("the pool's query events see a knex on a connection's statements", async () => {
  const sent: string[] = [];
  const record = ({ sql }: { sql: string }) => sent.push(sql);
  db.on('query', record);
  try {
    await onHeldConnection((trx) => trx.raw('select 42'));
  } finally {
    db.off('query', record);
  }
  expect(sent).toContain('select 42');
});

test('admit sees each statement before it is sent, and refuses it by throwing', async () => {
  const connection = await acquireConnection(db);
  try {
    const seen: (string | undefined)[] = [];
    const trx = knexOnConnection(
      db,
      connection,
      (sql) => {
        seen.push(sql);
        if (sql?.includes('refused')) throw new Error('not admitted');
      },
      Promise.resolve(),
    );
    await trx.raw('select 1');
    await expect(trx.raw("select 'refused'")).rejects.toThrow('not admitted');
    expect(seen).toEqual(['select 1', "select 'refused'"]);
  } finally {
    await releaseConnection(db, connection);
  }
});
