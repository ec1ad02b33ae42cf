import type { Knex } from 'knex';
import { DECISION_KINDS, LOG_LEVELS, RUN_STATUSES, STEP_STATUSES } from '../../core/forge/types';
import { createPool } from '../../db/pool';
import { testConfig } from '../support/harness';

// Migrations are frozen SQL: their CHECK constraints spell the forge's vocabulary out again.
// This reads what the database allows and holds it to core/forge/types.ts.

let db: Knex;
beforeAll(() => {
  db = createPool(testConfig().database.appUrl, 1);
});
afterAll(() => db.destroy());

/** The values a CHECK constraint on `table.column` allows (an `in (...)` list). */
async function allowedValues(table: string, column: string): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { definition: string }[] }>(
    `select pg_get_constraintdef(oid) as definition from pg_constraint
      where conrelid = ?::regclass and contype = 'c'`,
    [table],
  );
  const checks = rows.filter(({ definition }) => new RegExp(`\\(${column} = ANY`).test(definition));
  expect(checks).toHaveLength(1);
  return [...checks[0].definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1]);
}

test.each([
  ['runs', 'status', RUN_STATUSES],
  ['run_steps', 'status', STEP_STATUSES],
  ['run_logs', 'level', LOG_LEVELS],
  ['run_decisions', 'decision', DECISION_KINDS],
])(
  'the CHECK constraint on %s.%s allows exactly the vocabulary of core/forge/types.ts',
  async (table, column, vocabulary) => {
    expect((await allowedValues(table, column)).sort()).toEqual([...vocabulary].sort());
  },
);
