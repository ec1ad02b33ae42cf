import type { Knex } from 'knex';
import { invalid } from './errors';
import { UUID } from './ids';

// The windows of rows a list query reads; api/http/pagination.ts turns each spec shape into one.

/** Rows `offset` to `offset + limit - 1` of a filtered, ordered result set. */
export interface OffsetWindow {
  limit: number;
  offset: number;
}

// Same 400 for every cursor problem: cursors are opaque, so the details would mean nothing.
export const invalidCursor = () =>
  invalid('Invalid cursor', [{ field: 'query.cursor', message: 'is not a cursor this API issued' }]);

// Keyset paging for the lists the spec gives no shape (api/http/pagination.ts `keysetListQuery`):
// a page is the rows after the last row of the previous one in a unique order, so rows written
// or deleted meanwhile never shift a page, and a cursor stays valid when its row is gone.

/**
 * One column of a keyset order. The columns of an order, read together, must be unique and
 * never null. A timestamp's text is read to the microsecond (a JavaScript Date would cut it to
 * the millisecond and repeat or skip rows).
 */
export interface KeysetColumn {
  /** The column, as the query names it (`k.created_at`). */
  column: string;
  kind: 'text' | 'uuid' | 'timestamp';
}

export interface KeysetOrder {
  columns: KeysetColumn[];
  direction: 'asc' | 'desc';
}

/** The window of a keyset page: the rows after the position `afterId` (a `KeysetRow` id; null: the first page). */
export interface KeysetWindow {
  limit: number;
  afterId: string | null;
}

/** A listed row and the position after it, which a cursor carries (`shapeDPage` reads `id`). */
export interface KeysetRow<T> {
  id: string;
  item: T;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const shapeOf: Record<KeysetColumn['kind'], (value: string) => boolean> = {
  // PostgreSQL refuses NUL in text; anything else compares.
  text: (value) => !value.includes('\u0000'),
  uuid: (value) => UUID.test(value),
  timestamp: (value) => TIMESTAMP.test(value),
};

const valueSql = (column: KeysetColumn) =>
  column.kind === 'timestamp'
    ? `to_char(${column.column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
    : `${column.column}::text`;

/** A position as a cursor carries it: the sort values of a row. */
export const keysetPosition = (values: string[]): string => JSON.stringify(values);

/**
 * The sort values a position holds. A position this API did not issue (a cursor's envelope can
 * be forged) is the same 400 as any other bad cursor, never an SQL error.
 */
export function readKeysetPosition(position: string, columns: KeysetColumn[]): string[] {
  let values: unknown;
  try {
    values = JSON.parse(position);
  } catch {
    values = undefined;
  }
  const valid =
    Array.isArray(values) &&
    values.length === columns.length &&
    values.every((value, i) => typeof value === 'string' && shapeOf[columns[i].kind](value));
  if (!valid) throw invalidCursor();
  return values as string[];
}

/**
 * Reads the page of `query` that `window` names: up to `limit + 1` rows in `order` after the
 * window's position (the extra row only tells that another page exists), each with its own
 * position. `query` selects the row's columns; `toItem` turns a row into what is listed.
 */
export async function keysetSelect<Row, Item>(
  db: Knex,
  query: Knex.QueryBuilder,
  order: KeysetOrder,
  window: KeysetWindow,
  toItem: (row: Row) => Item,
): Promise<KeysetRow<Item>[]> {
  const columns = order.columns.map((c) => c.column);
  if (window.afterId !== null) {
    const after = readKeysetPosition(window.afterId, order.columns);
    const comparison = order.direction === 'asc' ? '>' : '<';
    query.whereRaw(`(${columns.join(', ')}) ${comparison} (${columns.map(() => '?').join(', ')})`, after);
  }
  const rows = (await query
    .orderBy(columns.map((column) => ({ column, order: order.direction })))
    .limit(window.limit + 1)
    .select(db.raw(`json_build_array(${order.columns.map(valueSql).join(', ')}) as keyset_position`))) as (Row & {
    keyset_position: string[];
  })[];
  return rows.map(({ keyset_position, ...row }) => ({
    id: keysetPosition(keyset_position),
    item: toItem(row as Row),
  }));
}
