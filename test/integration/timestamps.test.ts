import { createPool } from '../../db/pool';
import { isoTimestamp, toIso } from '../../core/timestamps';
import { testConfig } from '../support/harness';

// Proves that a timestamp PostgreSQL formats (isoTimestamp, for list pages) reads exactly as the
// one pg parses into a Date and toIso formats: the same instant, the same cut milliseconds.
const db = createPool(testConfig().database.appUrl, 1);
afterAll(() => db.destroy());

test('isoTimestamp gives the text toIso gives for the same stored instant, fractions and zones included', async () => {
  const stored = [
    '2026-11-23 23:25:00+00',
    '2026-11-23 23:25:00.123999+00',
    '2026-11-23 23:59:59.999999+00',
    '2026-03-29 01:30:00.5+02',
    '1969-12-31 23:59:59.0005+00',
    '2000-02-29 12:00:00.000001-11:30',
  ];
  const { rows } = await db.raw<{ rows: { parsed: Date; formatted: string }[] }>(
    `select t as parsed, ${isoTimestamp(db, 't', 'formatted').toQuery()}
       from unnest(?::timestamptz[]) as t`,
    [stored],
  );
  expect(rows.map((row) => row.formatted)).toEqual(rows.map((row) => toIso(row.parsed)));
  expect(rows[1].formatted).toBe('2026-11-23T23:25:00.123Z');
  expect(rows[4].formatted).toBe('1969-12-31T23:59:59.000Z');
});
