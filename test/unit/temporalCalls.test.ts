import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { callWithAbortSignal, callWithDeadline } from '../../core/temporalCalls';

const ROOT = path.join(__dirname, '..', '..');

// No request is sent: the scopes alone are under test, so the connection goes nowhere.
const lazyConnection = () => Connection.lazy({ address: '127.0.0.1:1' });

test('after a scoped call, promises are no longer tracked, where after the SDK’s own scope they stay tracked', () => {
  // In a fresh process: async hooks are process-wide, and this suite's Temporal workers have
  // their own storages on. Node gives promise continuations their own async id only while a
  // hook tracks them (documented under "Promise execution tracking").
  const program = `
    const { executionAsyncId } = require('node:async_hooks');
    const { Connection } = require('@temporalio/client');
    const { callWithDeadline } = require('./core/temporalCalls');
    const tracked = async () => { await null; const id = executionAsyncId(); await null; return id !== executionAsyncId(); };
    (async () => {
      const connection = Connection.lazy({ address: '127.0.0.1:1' });
      const before = await tracked();
      await callWithDeadline(connection, Date.now() + 1000, async () => {});
      const ours = await tracked();
      await connection.withDeadline(Date.now() + 1000, async () => {});
      console.log(JSON.stringify({ before, ours, sdk: await tracked() }));
      await connection.close();
    })();`;
  const output = execFileSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['-e', program], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(JSON.parse(output)).toEqual({ before: false, ours: false, sdk: true });
});

test('overlapping scoped calls each keep their deadline or signal until the last one ends', async () => {
  const connection = lazyConnection();
  const storage = connection.callContextStorage;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  // What a timer made inside a scope sees when it fires: the scope's context while the storage
  // is on, nothing once it has been turned off.
  const seenLater = (ms: number) => new Promise((resolve) => setTimeout(() => resolve(storage.getStore()), ms));

  const long = callWithDeadline(connection, 111, async () => {
    await held;
    return storage.getStore();
  });
  const signal = new AbortController().signal;
  let afterShort: Promise<unknown> = Promise.resolve();
  const short = await callWithAbortSignal(connection, signal, async () => {
    afterShort = seenLater(5);
    return storage.getStore();
  });
  expect(short).toEqual({ abortSignal: signal });
  // The long call is still in flight: the storage stays on.
  expect(await afterShort).toEqual({ abortSignal: signal });

  let afterLong: Promise<unknown> = Promise.resolve();
  release();
  expect(
    await callWithDeadline(connection, 222, async () => {
      afterLong = seenLater(5);
      return storage.getStore();
    }),
  ).toEqual({ deadline: 222 });
  expect(await long).toEqual({ deadline: 111 });
  // Both have ended: the storage is off.
  expect(await afterLong).toBeUndefined();
  await connection.close();
});
