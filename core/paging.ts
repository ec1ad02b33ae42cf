import type { Knex } from 'knex';
import { invalid } from './errors';
import { UUID } from './ids';
import { statement, type NoValues, type Placeholders, type RunArgs } from '../db/statements';

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

/** The window of a keyset page that may run backwards (towards the start; shape A's prevCursor). */
export interface DirectedKeysetWindow extends KeysetWindow {
  backward: boolean;
}

const REVERSED = { asc: 'desc', desc: 'asc' } as const;

/**
 * A keyset list as a compiled statement (db/statements.ts). `build` writes the rows to list (the
 * query and the columns it selects) from the list's values and shape, as a statement's builder
 * does. The window adds the position, the order and the limit: up to `limit + 1` rows in `order`
 * (reversed for a backward window) after the window's position (the extra row only tells that
 * another page exists), each with its own position. `toItem` turns a row into what is listed.
 */
export function keysetStatement<Row, Item, Values = NoValues, Shape = undefined>(list: {
  order: KeysetOrder;
  build: (q: Knex, values: Placeholders<Values>, shape: Shape) => Knex.QueryBuilder;
  toItem: (row: Row) => Item;
}) {
  const { order, build, toItem } = list;
  const columns = order.columns.map((c) => c.column);
  const positionNames = columns.map((_, i) => `position${i}`);
  interface PageShape {
    of: Shape;
    after: boolean;
    backward: boolean;
  }
  const page = statement<Row & { keyset_position: string[] }, Record<string, unknown>, PageShape>(
    (q, values, { of, after, backward }) => {
      const direction = backward ? REVERSED[order.direction] : order.direction;
      const query = build(q, values as Placeholders<Values>, of);
      if (after) {
        const comparison = direction === 'asc' ? '>' : '<';
        const position = positionNames.map((name) => values[name]);
        query.whereRaw(`(${columns.join(', ')}) ${comparison} (${columns.map(() => '?').join(', ')})`, position);
      }
      return query
        .orderBy(columns.map((column) => ({ column, order: direction })))
        .limit(values.limit)
        .select(q.raw(`json_build_array(${order.columns.map(valueSql).join(', ')}) as keyset_position`));
    },
  );
  return async (
    db: Knex,
    window: KeysetWindow & { backward?: boolean },
    ...args: RunArgs<Values, Shape>
  ): Promise<KeysetRow<Item>[]> => {
    const [values, shape] = args as [values?: Values, shape?: Shape];
    const position = window.afterId === null ? [] : readKeysetPosition(window.afterId, order.columns);
    const rows = await page.rows(
      db,
      {
        ...values,
        limit: window.limit + 1,
        ...Object.fromEntries(position.map((value, i) => [positionNames[i], value])),
      },
      { of: shape as Shape, after: window.afterId !== null, backward: window.backward ?? false },
    );
    return rows.map(({ keyset_position, ...row }) => ({
      id: keysetPosition(keyset_position),
      item: toItem(row as unknown as Row),
    }));
  };
}
