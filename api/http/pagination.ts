import type { JSONSchema } from 'json-schema-to-ts';
import { invalidCursor, type KeysetRow, type KeysetWindow, type OffsetWindow } from '../../core/paging';

/**
 * The five pagination shapes of the spec ("Pagination shapes"), in one place so that every
 * list endpoint validates, windows and describes its pages the same way.
 *
 * For each shape: a query-schema fragment (`properties` to spread into a route's query schema;
 * ajv then rejects out-of-range values with a 400 and fills the defaults), a function from the
 * validated query to a DB window, and a builder for the response metadata.
 */

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

/**
 * The largest offset accepted. It keeps offsets exact JavaScript numbers, and even multiplied
 * by a page size they stay inside PostgreSQL's bigint, so a huge value is a 400, not a 500.
 */
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

const limitProperty = (defaultLimit: number, maxLimit: number) =>
  ({ type: 'integer', minimum: 1, maximum: maxLimit, default: defaultLimit }) as const;

/** A row offset or a page number. */
const positionProperty = (minimum: number, defaultValue: number) =>
  ({ type: 'integer', minimum, maximum: MAX_OFFSET, default: defaultValue }) as const;

// Bounded so a decoded cursor can never be large work; real cursors are a few dozen characters.
const cursorProperty = { type: 'string', maxLength: 512 } as const;

/** Today's shape A and governance cursor: the offset of the next row, as a string. */
export const offsetCursor = (offset: number): string => String(offset);

/**
 * Reads an offset cursor. Clients must treat it as opaque, so anything we did not issue is a
 * 400. An absent or empty cursor (`?cursor=`) means the first page.
 */
export function parseOffsetCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0;
  const offset = /^\d+$/.test(cursor) ? Number(cursor) : NaN;
  if (!Number.isSafeInteger(offset)) throw invalidCursor();
  return offset;
}

// ---------------------------------------------------------------------------------------------
// Shape A: page-shaped cursor (/entities, /search, /entities/zombies, /forge/molds, /forge/runs)
// ---------------------------------------------------------------------------------------------

/** `limit` (default 20, 1..maxLimit) and `cursor`. Zombies pass 200 as their maximum. */
export const shapeAQuery = (maxLimit = 100) =>
  ({ limit: limitProperty(20, maxLimit), cursor: cursorProperty }) as const;

export function shapeAWindow(query: { limit: number; cursor?: string }): OffsetWindow {
  return { limit: query.limit, offset: parseOffsetCursor(query.cursor) };
}

/** The `page` object of entities, search and zombies. */
export interface ShapeAPage {
  limit: number;
  total: number;
  /** null on the last page. */
  nextCursor: string | null;
  /** null on the first page. */
  prevCursor: string | null;
}

/** The `pagination` object of the forge lists. */
export interface ShapeAForgePagination {
  total_count: number;
  /** '' when there are no more rows. */
  next_cursor: string;
  has_more: boolean;
}

/** The alternative `pagination` object of the entity list schema. */
export interface ShapeAEntityPagination {
  total: number;
  /** 1-based number of the page this window starts on. */
  page: number;
  pageSize: number;
  nextCursor: string | null;
}

// The three shape A forms differ only in naming; they share this one computation.
function nextOffset(window: OffsetWindow, total: number): number | null {
  const next = window.offset + window.limit;
  return next < total ? next : null;
}

export function shapeAPage(window: OffsetWindow, total: number): ShapeAPage {
  const next = nextOffset(window, total);
  return {
    limit: window.limit,
    total,
    nextCursor: next === null ? null : offsetCursor(next),
    prevCursor: window.offset === 0 ? null : offsetCursor(Math.max(0, window.offset - window.limit)),
  };
}

export function shapeAForgePagination(window: OffsetWindow, total: number): ShapeAForgePagination {
  const next = nextOffset(window, total);
  return { total_count: total, next_cursor: next === null ? '' : offsetCursor(next), has_more: next !== null };
}

export function shapeAEntityPagination(window: OffsetWindow, total: number): ShapeAEntityPagination {
  const next = nextOffset(window, total);
  return {
    total,
    page: Math.floor(window.offset / window.limit) + 1,
    pageSize: window.limit,
    nextCursor: next === null ? null : offsetCursor(next),
  };
}

// ---------------------------------------------------------------------------------------------
// Shape A over a keyset (/entities, /entities/zombies): the same query and metadata, with a
// cursor that carries a row's position instead of an offset, so a deep page costs what the first
// does and rows written meanwhile never shift a page. The spec says the cursor format will
// change; it stays opaque to clients.
// ---------------------------------------------------------------------------------------------

/** A shape A keyset window: the position to read after (or, `backward`, before). */
export interface ShapeAKeysetWindow {
  limit: number;
  /** A `KeysetRow` id; null: the first page. */
  afterId: string | null;
  /** Read the rows before `afterId` (the previous page), nearest first. */
  backward: boolean;
  /**
   * How many rows come before the page, as counted while paging: only `pagination.page` reads it
   * (rows written or deleted meanwhile do not update it).
   */
  offset: number;
}

interface KeysetCursorV1 {
  v: 1;
  /** `next`: the rows after `p`; `prev`: the rows before it. */
  d: 'next' | 'prev';
  p: string;
  o: number;
}

/** The JSON inside a base64url cursor; anything else is a 400 (`invalidCursor`). */
function decodeCursorEnvelope(cursor: string): unknown {
  // Buffer silently skips characters outside base64url, so check the alphabet first.
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
}

const encodeKeysetCursor = (cursor: Omit<KeysetCursorV1, 'v'>): string =>
  Buffer.from(JSON.stringify({ v: 1, ...cursor })).toString('base64url');

function decodeKeysetCursor(cursor: string): KeysetCursorV1 {
  const envelope = decodeCursorEnvelope(cursor);
  const { v, d, p, o } = (envelope ?? {}) as Partial<KeysetCursorV1>;
  const valid =
    v === 1 &&
    (d === 'next' || d === 'prev') &&
    typeof p === 'string' &&
    p !== '' &&
    Number.isSafeInteger(o) &&
    (o as number) >= 0;
  if (!valid) throw invalidCursor();
  return { v, d, p, o: o as number };
}

export function shapeAKeysetWindow(query: { limit: number; cursor?: string }): ShapeAKeysetWindow {
  // As for offset cursors, `?cursor=` means the first page.
  if (!query.cursor) return { limit: query.limit, afterId: null, backward: false, offset: 0 };
  const cursor = decodeKeysetCursor(query.cursor);
  return { limit: query.limit, afterId: cursor.p, backward: cursor.d === 'prev', offset: cursor.o };
}

/** Reads up to `limit + 1` rows after the window's position, or before it (nearest first) when backward. */
export type KeysetReader<T> = (window: ShapeAKeysetWindow) => Promise<KeysetRow<T>[]>;

/**
 * One shape A page read through `read`, with both metadata forms and the `total` that `count`
 * reads. The two queries go out together: on a pipelined connection (db/pool.ts) they share a
 * round trip. A backward read that reaches the start with fewer rows than a page is replaced by
 * the first page, so paging back always ends on a full first page.
 */
export async function readShapeAKeysetPage<T>(
  window: ShapeAKeysetWindow,
  read: KeysetReader<T>,
  count: () => Promise<number>,
): Promise<{ items: T[]; page: ShapeAPage; pagination: ShapeAEntityPagination }> {
  const { limit } = window;
  const [firstRead, total] = await Promise.all([read(window), count()]);
  let rows = firstRead;
  let sent: KeysetRow<T>[];
  let offset = window.offset;
  let hasBefore: boolean;
  let hasAfter: boolean;
  if (!window.backward) {
    sent = rows.slice(0, limit);
    hasBefore = window.afterId !== null;
    hasAfter = rows.length > limit;
  } else if (rows.length > limit) {
    sent = rows.slice(0, limit).reverse();
    hasBefore = true;
    hasAfter = true;
  } else {
    // Reached the start. Exactly a page before the position: that is the first page, and the
    // position's row follows it. Fewer: the first page is read forward, full.
    const exact = rows.length === limit;
    rows = exact ? rows.reverse() : await read({ limit, afterId: null, backward: false, offset: 0 });
    sent = rows.slice(0, limit);
    offset = 0;
    hasBefore = false;
    hasAfter = exact || rows.length > limit;
  }
  const last = sent[sent.length - 1];
  const nextCursor = hasAfter && last ? encodeKeysetCursor({ d: 'next', p: last.id, o: offset + sent.length }) : null;
  const prevPosition = sent[0]?.id ?? window.afterId;
  const prevCursor =
    hasBefore && prevPosition !== null
      ? encodeKeysetCursor({ d: 'prev', p: prevPosition, o: Math.max(0, offset - limit) })
      : null;
  return {
    items: sent.map((row) => row.item),
    page: { limit, total, nextCursor, prevCursor },
    pagination: { total, page: Math.floor(offset / limit) + 1, pageSize: limit, nextCursor },
  };
}

// ---------------------------------------------------------------------------------------------
// Shape B: page-based (/repositories)
// ---------------------------------------------------------------------------------------------

/** `page` (1-based, default 1) and `page_size` (default 20, 1..100). */
export const SHAPE_B_QUERY = {
  page: positionProperty(1, 1),
  page_size: limitProperty(20, 100),
} as const;

export function shapeBWindow(query: { page: number; page_size: number }): OffsetWindow {
  return { limit: query.page_size, offset: (query.page - 1) * query.page_size };
}

export interface ShapeBPagination {
  page: number;
  pageSize: number;
  totalPages: number;
  totalItems: number;
  hasNext: boolean;
  hasPrevious: boolean;
}

export function shapeBPagination(window: OffsetWindow, total: number): ShapeBPagination {
  const page = Math.floor(window.offset / window.limit) + 1;
  const totalPages = Math.ceil(total / window.limit);
  return {
    page,
    pageSize: window.limit,
    totalPages,
    totalItems: total,
    hasNext: page < totalPages,
    hasPrevious: page > 1,
  };
}

// ---------------------------------------------------------------------------------------------
// Shape C: identity-provider style (/users, /admin/users)
// ---------------------------------------------------------------------------------------------

/** /users: `first` (an offset, default 0) and `max` (default 100, 1..200). */
export const SHAPE_C_USERS_QUERY = {
  first: positionProperty(0, 0),
  max: limitProperty(100, 200),
} as const;

/** /admin/users: `page` (0-based, default 0) and `pageSize` (default 100, 1..200). */
export const SHAPE_C_ADMIN_USERS_QUERY = {
  page: positionProperty(0, 0),
  pageSize: limitProperty(100, 200),
} as const;

export function shapeCUsersWindow(query: { first: number; max: number }): OffsetWindow {
  return { limit: query.max, offset: query.first };
}

export function shapeCAdminUsersWindow(query: { page: number; pageSize: number }): OffsetWindow {
  return { limit: query.pageSize, offset: query.page * query.pageSize };
}

export interface ShapeCPage {
  first: number;
  max: number;
  /** Items in this response. */
  count: number;
  hasMore: boolean;
}

export function shapeCPage(window: OffsetWindow, count: number, total: number): ShapeCPage {
  return { first: window.offset, max: window.limit, count, hasMore: window.offset + count < total };
}

// ---------------------------------------------------------------------------------------------
// Shape D: true opaque cursor (/operations/resources)
// ---------------------------------------------------------------------------------------------

/** `limit` (default 50, 1..200) and `cursor`. */
export const SHAPE_D_QUERY = { limit: limitProperty(50, 200), cursor: cursorProperty } as const;

// Versioned (`v`) because the spec says the envelope will gain fields; a new version can be
// read alongside v1 while old cursors are still in clients' hands.
interface CursorEnvelopeV1 {
  v: 1;
  id: string;
}

export function encodeShapeDCursor(afterId: string): string {
  const envelope: CursorEnvelopeV1 = { v: 1, id: afterId };
  return Buffer.from(JSON.stringify(envelope)).toString('base64url');
}

/** The id a cursor points after. Anything this API did not issue is a 400, never a 500. */
export function decodeShapeDCursor(cursor: string): string {
  const envelope = decodeCursorEnvelope(cursor);
  if (typeof envelope !== 'object' || envelope === null) throw invalidCursor();
  const { v, id } = envelope as { v?: unknown; id?: unknown };
  if (v !== 1 || typeof id !== 'string' || id === '') throw invalidCursor();
  return id;
}

/**
 * Lists the spec gives no shape (API keys, groups, roles, bundles, integrations, a team's
 * members, mappings and roles, run logs) are bounded the shape D way: a `limit` and an opaque
 * keyset `cursor` carrying the last row's unique sort key, answered with `next_cursor`. The page
 * size is the spec's default for most lists (20, at most 100) unless a list has a reason to differ.
 */
export const keysetListQuery = (defaultLimit = 20, maxLimit = 100) =>
  ({ limit: limitProperty(defaultLimit, maxLimit), cursor: cursorProperty }) as const;

export function shapeDWindow(query: { limit: number; cursor?: string }): KeysetWindow {
  // As for offset cursors, `?cursor=` means the first page.
  const afterId = query.cursor ? decodeShapeDCursor(query.cursor) : null;
  return { limit: query.limit, afterId };
}

export interface KeysetPage<T> {
  items: T[];
  /** '' when there are no more rows. */
  next_cursor: string;
}

const nextCursorProperty = {
  type: 'string',
  description: "The cursor of the next page; '' when there is none",
} as const;

/**
 * The response schema of a bounded list: `{<key>: [items], next_cursor}`. The type of
 * `properties` is spelled out since a computed key alone widens to `string`, and the handler's
 * return type is derived from this schema.
 */
export const keysetPageSchema = <const K extends string, const I extends JSONSchema>(key: K, items: I) =>
  ({
    type: 'object',
    required: [key, 'next_cursor'],
    properties: { [key]: { type: 'array', items }, next_cursor: nextCursorProperty } as {
      readonly [P in K]: { readonly type: 'array'; readonly items: I };
    } & { readonly next_cursor: typeof nextCursorProperty },
    additionalProperties: false,
  }) as const;

/**
 * `rows` is what the `limit + 1` select returned, each with its keyset position; the extra row is
 * dropped, not sent, and the next cursor carries the position of the last row sent.
 */
export function shapeDPage<T>(rows: KeysetRow<T>[], window: KeysetWindow): KeysetPage<T> {
  const sent = rows.slice(0, window.limit);
  const hasMore = rows.length > window.limit;
  return {
    items: sent.map((row) => row.item),
    next_cursor: hasMore ? encodeShapeDCursor(sent[sent.length - 1].id) : '',
  };
}

// ---------------------------------------------------------------------------------------------
// Limit/offset (/governance/actions); the response carries only a top-level `total`
// ---------------------------------------------------------------------------------------------

/** `limit` (default 50, 1..200), `offset` (default 0), and `cursor`, which one description uses. */
export const LIMIT_OFFSET_QUERY = {
  limit: limitProperty(50, 200),
  offset: positionProperty(0, 0),
  cursor: cursorProperty,
} as const;

export function limitOffsetWindow(query: { limit: number; offset: number; cursor?: string }): OffsetWindow {
  // `offset` always has a value (its default), so a cursor, when sent, is the one that counts.
  const offset = query.cursor ? parseOffsetCursor(query.cursor) : query.offset;
  return { limit: query.limit, offset };
}
