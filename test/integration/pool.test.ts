import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { defineRoute } from '../../api/http/route';
import { apiRoutes } from '../../api/routes';
import { createPool } from '../../db/pool';
import { bearer, jsonOf, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// A pool given the process's logger writes knex's own messages there, as JSON lines, and not to
// the console, where they would be plain text among the process's JSON log lines.

test("knex's own warning (an acquire aborted by the pool's destruction) is a JSON line of the given logger, and the console gets nothing", async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const consoleLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const db = createPool(testConfig().database.appUrl, 1, { logger });
  try {
    const holding = await db.transaction();
    // The pool's one connection is taken: this query waits for it, and the destruction aborts it.
    const waiting = db.raw('select 1').then(
      () => 'ran',
      (err: Error) => err.message,
    );
    const destroyed = db.destroy();
    await holding.rollback();
    await destroyed;
    expect(await waiting).toBe('aborted');

    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, from: 'knex', msg: expect.stringMatching(/^Acquire connection error: /) }),
    );
    expect(consoleLog).not.toHaveBeenCalled();
  } finally {
    consoleLog.mockRestore();
  }
});

// A busy database is a 503 with Retry-After, never a 500: a pool with no free connection, and a
// statement Postgres cancelled for running over the API's statement_timeout.
describe('a busy database answers 503 SERVICE_UNAVAILABLE with Retry-After', () => {
  const slowRoute = defineRoute({
    method: 'GET',
    path: '/slow-statement',
    tag: 'Test',
    access: 'catalog:read',
    summary: 'one statement longer than the test pool allows',
    responses: { 200: { description: 'never' } },
    handler: async ({ db }) => (await db.raw('select pg_sleep(2)')).rows,
  });
  let api: TestApi;
  let viewer: { token: string };
  beforeAll(async () => {
    const config = testConfig();
    const limits = { statementTimeoutMs: 200, idleInTransactionTimeoutMs: 5_000, acquireTimeoutMs: 300 };
    api = await startApi({
      deps: await testDeps({
        ...config,
        database: { ...config.database, poolMax: 1 },
        limits: { ...config.limits, database: { ...config.limits.database, api: limits } },
      }),
      routes: [...apiRoutes, slowRoute],
    });
    viewer = await sessionToken({
      tenant: `pool-${randomUUID().slice(0, 8)}`,
      email: 'v@pool.test',
      roles: ['viewer'],
    });
  });
  afterAll(() => api.close());

  const expectBusy = async (res: Response) => {
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await jsonOf(res)).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  };

  test('a statement over statement_timeout is cancelled by Postgres and answered 503', async () => {
    await expectBusy(await fetch(`${api.url}/api/v1/slow-statement`, { headers: bearer(viewer.token) }));
  });

  test('no connection free within the acquire timeout: 503, and the next request once one is free succeeds', async () => {
    const held = await api.deps.db.transaction();
    try {
      await expectBusy(await fetch(`${api.url}/api/v1/stats/lifecycle`, { headers: bearer(viewer.token) }));
    } finally {
      await held.rollback();
    }
    expect((await fetch(`${api.url}/api/v1/stats/lifecycle`, { headers: bearer(viewer.token) })).status).toBe(200);
  });
});
