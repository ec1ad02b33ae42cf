import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { callWithAbortSignal, callWithDeadline, keepAsyncHooksOff } from '../../core/temporalCalls';

const ROOT = path.join(__dirname, '..', '..');

// No request is sent: the scopes alone are under test, so the connection goes nowhere.
const lazyConnection = () => keepAsyncHooksOff(Connection.lazy({ address: '127.0.0.1:1' }));

test('after our scopes and the client’s own namespaced calls, promises are no longer tracked', () => {
  // In a fresh process: async hooks are process-wide, and this suite's Temporal workers have
  // their own storages on. Node gives promise continuations their own async id only while a
  // hook tracks them (documented under "Promise execution tracking"). A namespaced call is run
  // inside the client's withMetadata; it fails here (nothing listens on port 1), after its run.
  const program = `
    const { executionAsyncId } = require('node:async_hooks');
    const { Connection } = require('@temporalio/client');
    const { callWithDeadline, keepAsyncHooksOff } = require('./core/temporalCalls');
    const tracked = async () => { await null; const id = executionAsyncId(); await null; return id !== executionAsyncId(); };
    const namespaced = (connection) => connection.workflowService.describeNamespace({ namespace: 'x' }).catch(() => {});
    (async () => {
      const before = await tracked();
      const ours = keepAsyncHooksOff(Connection.lazy({ address: '127.0.0.1:1', interceptors: [] }));
      await callWithDeadline(ours, Date.now() + 1000, async () => {});
      const afterScope = await tracked();
      await namespaced(ours);
      const afterCall = await tracked();
      const plain = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
      await namespaced(plain);
      console.log(JSON.stringify({ before, afterScope, afterCall, sdk: await tracked() }));
      await Promise.all([ours.close(), plain.close()]);
    })();`;
  const output = execFileSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['-e', program], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(JSON.parse(output)).toEqual({ before: false, afterScope: false, afterCall: false, sdk: true });
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
    // The client's own run inside the scope (as around a namespaced call) leaves the storage on.
    await connection.withMetadata({ 'x-test': '1' }, async () => {});
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
