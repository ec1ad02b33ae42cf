import pino from 'pino';
import { createPool } from '../../db/pool';
import { testConfig } from '../support/harness';

// A pool given the process's logger writes knex's own messages there, as JSON lines, and not to
// the console, where they would be plain text among the process's JSON log lines.

test("knex's own warning (an acquire aborted by the pool's destruction) is a JSON line of the given logger, and the console gets nothing", async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const consoleLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const db = createPool(testConfig().database.appUrl, 1, logger);
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
