import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { appendLogs, listLogs } from '../../core/forge/runLogStore';
import { markRun, markStep } from '../../core/forge/runStore';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { useForgeSuite } from '../support/forgeRuns';
import { bearer, sessionToken, testConfig, type TestApi } from '../support/harness';
import { until } from '../support/processes';
import { sseEvents as readEvents, type SseEvent as LogEvent } from '../support/sse';

// Run logs: appends, pages and the server-sent event stream.

/** The suite's API runs with the configured (default) caps. */
const STREAM_CAP = testConfig().forge.logStreamsPerTenant;
const USER_STREAM_CAP = testConfig().limits.logStreamsPerUser;

const forge = useForgeSuite();
const { call, createMold, startRun, storeRunWithoutWorkflow, waitForGate } = forge;
let api: TestApi;
let writer: string;
let writerTenantId: string;
beforeAll(() => ({ api, writer, writerTenantId } = forge.suite));
// Writes as the workers would, from outside the API, so the API's own queries can be counted.
let outside: Knex;
beforeAll(() => {
  outside = createPool(testConfig().database.appUrl, 2);
});
afterAll(() => outside.destroy());

type SseEvent = LogEvent<{ message?: string; status?: string | null }>;
const sseEvents = (res: Response) => readEvents<SseEvent['data']>(res);

const follow = (runId: string, signal?: AbortSignal, headers: Record<string, string> = {}, token = writer) =>
  fetch(`${api.url}/api/v1/forge/runs/${runId}/logs?follow=true`, {
    headers: { ...bearer(token), ...headers },
    signal,
  });

/** Tokens of `count` readers of the writer's tenant, each a user of its own. */
const readers = (count: number) =>
  Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = `reader-${i}@streams.test`;
      return (await sessionToken({ tenant: writerTenantId, email, roles: ['viewer'] })).token;
    }),
  );

const appendOutside = (runId: string, message: string) =>
  withTenant(outside, writerTenantId, (trx) => appendLogs(trx, writerTenantId, runId, [{ message }]));

describe('logs', () => {
  test('bookkeeping repeated by a retried workflow task changes nothing: a finished step keeps its status, a workflow line is logged once', async () => {
    const runId = await storeRunWithoutWorkflow([
      { position: 0, name: 'only', type: 'api-call', config: {}, requiresApproval: false },
    ]);
    const inTenant = <T>(work: (trx: Parameters<typeof appendLogs>[0]) => Promise<T>) =>
      withTenant(api.deps.db, writerTenantId, work);
    await inTenant(async (trx) => {
      await markStep(trx, runId, 0, 'running');
      await markStep(trx, runId, 0, 'cancelled');
      await markStep(trx, runId, 0, 'completed', { output: { late: true } });
      for (let i = 0; i < 2; i++)
        await appendLogs(trx, writerTenantId, runId, [{ level: 'warn', message: 'cancelled by dev@forge.test' }], {
          once: true,
        });
      // Script output is not deduplicated: a script may print the same line twice.
      for (let i = 0; i < 2; i++) await appendLogs(trx, writerTenantId, runId, [{ message: 'same line' }]);
    });
    const { body } = await call(writer, 'GET', `/forge/runs/${runId}`);
    expect(body.steps[0]).toEqual(expect.objectContaining({ status: 'cancelled', output: null }));
    const messages = (await inTenant((trx) => listLogs(trx, runId, { afterId: 0, limit: 1000 }))).map(
      (line) => line.message,
    );
    expect(messages).toEqual(['cancelled by dev@forge.test', 'same line', 'same line']);
  });

  test('log appends to one run take turns, so ids commit in order and a reader following ids never skips a line', async () => {
    const { id: runId } = await startRun((await createMold({ actions: [{ name: 'gate', type: 'approval' }] })).slug);
    await waitForGate(runId, 0);
    const inTenant = <T>(work: (trx: Parameters<typeof appendLogs>[0]) => Promise<T>) =>
      withTenant(api.deps.db, writerTenantId, work);
    const lastId = Math.max(
      0,
      ...(await inTenant((trx) => listLogs(trx, runId, { afterId: 0, limit: 1000 }))).map((line) => line.id),
    );
    let releaseFirst = () => {};
    let firstAppended = false;
    const first = inTenant(async (trx) => {
      await appendLogs(trx, writerTenantId, runId, [{ message: 'first' }]);
      firstAppended = true;
      await new Promise<void>((resolve) => (releaseFirst = resolve));
    });
    let secondDone = false;
    let second: Promise<unknown>;
    try {
      await until('the first append under way', 5, async () => firstAppended || undefined);
      second = inTenant((trx) => appendLogs(trx, writerTenantId, runId, [{ message: 'second' }])).then(
        () => (secondDone = true),
      );
      // While the first append's transaction is open, a reader sees neither line, and the second
      // append waits rather than committing a line the reader would see first.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(secondDone).toBe(false);
      expect(await inTenant((trx) => listLogs(trx, runId, { afterId: lastId, limit: 1000 }))).toEqual([]);
    } finally {
      releaseFirst(); // an open transaction would keep the pool from closing
    }
    await Promise.all([first, second]);
    expect(
      (await inTenant((trx) => listLogs(trx, runId, { afterId: lastId, limit: 1000 }))).map((line) => line.message),
    ).toEqual(['first', 'second']);
    await call(writer, 'POST', `/forge/runs/${runId}/cancel`);
  }, 60_000);

  test('follow=true streams script output live as server-sent events (a line arrives while the script still runs) and ends with the run', async () => {
    const mold = await createMold({
      actions: [{ name: 'slow', type: 'script', config: { script: 'echo one; sleep 2; echo two' } }],
    });
    const started = await startRun(mold.slug);
    const res = await follow(started.id);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    // Each event with the time it arrived; the server closes the stream when the run ends.
    const events: (SseEvent & { at: number })[] = [];
    for await (const event of sseEvents(res)) events.push({ ...event, at: Date.now() });
    const line = (message: string) => events.find((e) => e.event === 'message' && e.data.message === message)!;
    expect(line('two').at - line('one').at).toBeGreaterThan(1000);
    // Each event is a log line as GET /logs pages them: nothing of the read that found it.
    expect(Object.keys(line('one').data).sort()).toEqual(['created_at', 'id', 'level', 'message', 'step_position']);
    expect(events.at(-1)).toEqual(expect.objectContaining({ event: 'end', data: { status: 'completed' } }));
  }, 60_000);

  test('pages: limit and an opaque cursor, next_cursor until the last page; a cursor not issued here is a 400', async () => {
    const runId = await storeRunWithoutWorkflow();
    for (const message of ['a', 'b', 'c', 'd', 'e']) await appendOutside(runId, message);
    const page = async (query: string) => (await call(writer, 'GET', `/forge/runs/${runId}/logs?${query}`)).body;
    const first = await page('limit=2');
    const second = await page(`limit=2&cursor=${first.next_cursor}`);
    const last = await page(`limit=2&cursor=${second.next_cursor}`);
    expect([first, second, last].map((p) => p.lines.map((l: { message: string }) => l.message))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e'],
    ]);
    expect(last.next_cursor).toBe('');
    expect((await page('limit=1001')).error.code).toBe('INVALID_REQUEST');
    expect((await call(writer, 'GET', `/forge/runs/${runId}/logs?cursor=42`)).status).toBe(400);
  });

  test('a follower reads only when the run changes: one read per notified append and none while idle (no polling); it ends with the run', async () => {
    const runId = await storeRunWithoutWorkflow();
    let logReads = 0;
    const countLogReads = (query: { sql: string }) => {
      if (/^select .* from "run_logs"/.test(query.sql)) logReads++;
    };
    api.deps.db.on('query', countLogReads);
    try {
      const events = sseEvents(await follow(runId));
      await appendOutside(runId, 'first');
      expect((await events.next()).value).toEqual(
        expect.objectContaining({ data: expect.objectContaining({ message: 'first' }) }),
      );
      const readsAfterFirst = logReads;
      // Long enough for a poller (the stream used to read every 500 ms) to have read again.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(logReads).toBe(readsAfterFirst);

      await appendOutside(runId, 'second');
      expect((await events.next()).value).toEqual(
        expect.objectContaining({ data: expect.objectContaining({ message: 'second' }) }),
      );
      expect(logReads).toBe(readsAfterFirst + 1);

      await withTenant(outside, writerTenantId, (trx) => markRun(trx, runId, 'completed'));
      expect((await events.next()).value).toEqual({ event: 'end', id: undefined, data: { status: 'completed' } });
      expect((await events.next()).done).toBe(true);
    } finally {
      api.deps.db.off('query', countLogReads);
    }
  }, 30_000);

  test('following a run that is not there is a 404 that holds no stream, and a run that is there opens with one read of the database: its status and its lines so far', async () => {
    for (let i = 0; i <= STREAM_CAP; i++) {
      const missing = await follow(randomUUID());
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
    const runId = await storeRunWithoutWorkflow();
    await appendOutside(runId, 'before');
    await withTenant(outside, writerTenantId, (trx) => markRun(trx, runId, 'completed'));
    const sent: string[] = [];
    const record = (query: { sql: string }) => sent.push(query.sql);
    api.deps.db.on('query', record);
    try {
      const events = sseEvents(await follow(runId));
      expect((await events.next()).value).toEqual(
        expect.objectContaining({ data: expect.objectContaining({ message: 'before' }) }),
      );
      expect((await events.next()).value).toEqual({ event: 'end', id: undefined, data: { status: 'completed' } });
    } finally {
      api.deps.db.off('query', record);
    }
    expect(sent.filter((sql) => !/^(begin; set local app\.tenant_id|COMMIT)/.test(sql))).toEqual([
      expect.stringMatching(/ from "runs" as "r" /),
    ]);
  }, 30_000);

  test('a client reconnecting with Last-Event-ID gets the lines after that one, then new ones; a Last-Event-ID that is not a line id is a 400', async () => {
    const runId = await storeRunWithoutWorkflow();
    for (const message of ['one', 'two', 'three']) await appendOutside(runId, message);
    const first = new AbortController();
    const received: SseEvent[] = [];
    try {
      for await (const event of sseEvents(await follow(runId, first.signal))) {
        if (received.push(event) === 3) break;
      }
    } finally {
      first.abort();
    }
    expect(received.map((event) => event.data.message)).toEqual(['one', 'two', 'three']);

    const reconnected = new AbortController();
    try {
      const res = await follow(runId, reconnected.signal, { 'last-event-id': received[1].id! });
      expect(res.status).toBe(200);
      const events = sseEvents(res);
      expect((await events.next()).value).toEqual(received[2]);
      await appendOutside(runId, 'four');
      expect((await events.next()).value).toMatchObject({ event: 'message', data: { message: 'four' } });
    } finally {
      reconnected.abort();
    }

    for (const notALineId of ['three', '-1', '1.5', '99999999999999999999']) {
      const res = await follow(runId, undefined, { 'last-event-id': notALineId });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: { code: 'INVALID_REQUEST', details: [{ field: 'headers.last-event-id' }] },
      });
    }
  });

  test(`a tenant holds at most SHIPYARD_FORGE_LOG_STREAMS_PER_TENANT (${STREAM_CAP}) streams at once: one more is a 429 with Retry-After; closing one admits another`, async () => {
    const runId = await storeRunWithoutWorkflow();
    // Users enough to fill the tenant's budget without any of them reaching their own.
    const tokens = await readers(Math.ceil(STREAM_CAP / (USER_STREAM_CAP - 1)) + 1);
    const tokenOf = (i: number) => tokens[i % tokens.length];
    const clients = Array.from({ length: STREAM_CAP + 1 }, () => new AbortController());
    try {
      const open = await Promise.all(
        clients.slice(0, -1).map((client, i) => follow(runId, client.signal, {}, tokenOf(i))),
      );
      expect(open.map((res) => res.status)).toEqual(Array(STREAM_CAP).fill(200));
      const refused = await follow(runId, undefined, {}, tokenOf(STREAM_CAP));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');

      clients[0].abort();
      const admitted = await until('a stream admitted after one closed', 10, async () => {
        const res = await follow(runId, clients.at(-1)!.signal, {}, tokenOf(STREAM_CAP));
        if (res.status === 200) return res;
        await res.body?.cancel();
        return undefined;
      });
      expect(admitted.status).toBe(200);
    } finally {
      clients.forEach((client) => client.abort());
    }
  }, 30_000);

  test(`one user holds at most SHIPYARD_FORGE_LOG_STREAMS_PER_USER (${USER_STREAM_CAP}) streams: one more is a 429 naming the user's limit, while another user of the tenant is still admitted`, async () => {
    const runId = await storeRunWithoutWorkflow();
    const [mine, theirs] = await readers(2);
    const clients = Array.from({ length: USER_STREAM_CAP + 1 }, () => new AbortController());
    try {
      const open = await Promise.all(clients.slice(0, -1).map((client) => follow(runId, client.signal, {}, mine)));
      expect(open.map((res) => res.status)).toEqual(Array(USER_STREAM_CAP).fill(200));
      const refused = await follow(runId, undefined, {}, mine);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/per user/);
      const other = await follow(runId, clients.at(-1)!.signal, {}, theirs);
      expect(other.status).toBe(200);
    } finally {
      clients.forEach((client) => client.abort());
    }
  }, 30_000);
});
