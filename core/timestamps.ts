import type { Knex } from 'knex';

// Timestamps leave the stores as ISO 8601 strings, the form every response schema declares.
// (pg returns Dates; a value built elsewhere may already be a string, which `new Date` accepts.)

export const toIso = (value: Date | string): string => new Date(value).toISOString();

export const toIsoOrNull = (value: Date | string | null): string | null => (value ? toIso(value) : null);

/**
 * `column` as toIso writes it, formatted by PostgreSQL: UTC, to the millisecond, the rest cut
 * off as a JavaScript Date cuts it. For rows read in bulk (the catalog's entities): each value
 * goes to the response as read, where pg would parse it into a Date for toIso to format again
 * (7% of a catalog page's API CPU).
 */
export const isoTimestamp = (db: Knex, column: string, alias: string): Knex.Raw =>
  db.raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ??`, [column, alias]);
