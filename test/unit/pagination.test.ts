import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FromSchema } from 'json-schema-to-ts';
import { ApiError } from '../../core/errors';
import {
  SHAPE_C_USERS_QUERY,
  SHAPE_C_ADMIN_USERS_QUERY,
  LIMIT_OFFSET_QUERY,
  SHAPE_D_QUERY,
  SHAPE_B_QUERY,
  shapeAPage,
  shapeAQuery,
  shapeAWindow,
  decodeShapeDCursor,
  encodeShapeDCursor,
  shapeAEntityPagination,
  shapeAForgePagination,
  shapeCUsersWindow,
  shapeCPage,
  shapeCAdminUsersWindow,
  limitOffsetWindow,
  offsetCursor,
  shapeDPage,
  keysetPageSchema,
  shapeDWindow,
  shapeBPagination,
  shapeBWindow,
  parseOffsetCursor,
} from '../../api/http/pagination';

// The same options as the query validator of api/http/validation.ts.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true }));

/** Validates a raw query (strings, as Koa gives it) against a fragment spread into a route schema. */
function validateQuery(properties: object, raw: Record<string, string>) {
  const validate = ajv.compile({ type: 'object', properties, additionalProperties: false });
  const query: Record<string, unknown> = { ...raw };
  return { ok: validate(query), query };
}

function expectInvalidRequest(fn: () => unknown) {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ApiError);
  expect(thrown).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
}

describe('offset cursors (shape A and governance)', () => {
  it('round-trips an offset through offsetCursor and parseOffsetCursor', () => {
    expect(parseOffsetCursor(offsetCursor(40))).toBe(40);
  });

  it('reads an absent or empty cursor as the first page', () => {
    expect(parseOffsetCursor(undefined)).toBe(0);
    expect(parseOffsetCursor('')).toBe(0);
  });

  it.each(['-1', 'abc', '1.5', '1e3', ' 4', '0x10', '99999999999999999999'])(
    'rejects cursor %p with a 400 INVALID_REQUEST',
    (cursor) => expectInvalidRequest(() => parseOffsetCursor(cursor)),
  );
});

describe('shape A: page-shaped cursor', () => {
  it('defaults limit to 20 and accepts 1..100', () => {
    const { ok, query } = validateQuery(shapeAQuery(), {});
    expect(ok).toBe(true);
    expect(query).toEqual({ limit: 20 });
    expect(validateQuery(shapeAQuery(), { limit: '1' }).ok).toBe(true);
    expect(validateQuery(shapeAQuery(), { limit: '100' }).ok).toBe(true);
  });

  it.each(['0', '101', '2.5', 'ten'])('rejects limit %p', (limit) => {
    expect(validateQuery(shapeAQuery(), { limit }).ok).toBe(false);
  });

  it('lets a caller raise the maximum (zombies allow 200)', () => {
    expect(validateQuery(shapeAQuery(200), { limit: '200' }).ok).toBe(true);
    expect(validateQuery(shapeAQuery(200), { limit: '201' }).ok).toBe(false);
  });

  it('types a handler query with limit always present and cursor optional (checked by tsc)', () => {
    type Query = FromSchema<{ type: 'object'; properties: ReturnType<typeof shapeAQuery> }>;
    const query: Query = { limit: 20 };
    const limit: number = query.limit;
    expect(shapeAWindow(query)).toEqual({ limit, offset: 0 });
  });

  it('starts at offset 0 without a cursor and at the cursor offset with one', () => {
    expect(shapeAWindow({ limit: 20 })).toEqual({ limit: 20, offset: 0 });
    expect(shapeAWindow({ limit: 20, cursor: '40' })).toEqual({ limit: 20, offset: 40 });
  });

  it('rejects a malformed cursor with a 400 INVALID_REQUEST', () => {
    expectInvalidRequest(() => shapeAWindow({ limit: 20, cursor: 'eyJ2IjoxfQ' }));
  });

  it('gives a next cursor and no previous cursor on the first page', () => {
    expect(shapeAPage({ limit: 20, offset: 0 }, 45)).toEqual({
      limit: 20,
      total: 45,
      nextCursor: '20',
      prevCursor: null,
    });
  });

  it('gives no next cursor on the last page and a previous cursor one page back', () => {
    expect(shapeAPage({ limit: 20, offset: 40 }, 45)).toEqual({
      limit: 20,
      total: 45,
      nextCursor: null,
      prevCursor: '20',
    });
  });

  it('gives no next cursor when the last page is exactly full', () => {
    expect(shapeAPage({ limit: 20, offset: 20 }, 40).nextCursor).toBeNull();
  });

  it('clamps the previous cursor at 0 when the offset is not a multiple of the limit', () => {
    expect(shapeAPage({ limit: 20, offset: 5 }, 45).prevCursor).toBe('0');
  });

  it('follows nextCursor from the first page to the last and visits every row once', () => {
    const total = 45;
    const offsets: number[] = [];
    let cursor: string | undefined;
    do {
      const window = shapeAWindow({ limit: 20, cursor });
      offsets.push(window.offset);
      cursor = shapeAPage(window, total).nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(offsets).toEqual([0, 20, 40]);
  });

  it('gives zero totals and null cursors for an empty result', () => {
    expect(shapeAPage({ limit: 20, offset: 0 }, 0)).toEqual({
      limit: 20,
      total: 0,
      nextCursor: null,
      prevCursor: null,
    });
  });

  it('builds the forge pagination with an empty next_cursor and has_more false when done', () => {
    expect(shapeAForgePagination({ limit: 20, offset: 0 }, 45)).toEqual({
      total_count: 45,
      next_cursor: '20',
      has_more: true,
    });
    expect(shapeAForgePagination({ limit: 20, offset: 40 }, 45)).toEqual({
      total_count: 45,
      next_cursor: '',
      has_more: false,
    });
    expect(shapeAForgePagination({ limit: 20, offset: 0 }, 0)).toEqual({
      total_count: 0,
      next_cursor: '',
      has_more: false,
    });
  });

  it('builds the entity list pagination with a 1-based page number', () => {
    expect(shapeAEntityPagination({ limit: 20, offset: 0 }, 45)).toEqual({
      total: 45,
      page: 1,
      pageSize: 20,
      nextCursor: '20',
    });
    expect(shapeAEntityPagination({ limit: 20, offset: 40 }, 45)).toEqual({
      total: 45,
      page: 3,
      pageSize: 20,
      nextCursor: null,
    });
    expect(shapeAEntityPagination({ limit: 20, offset: 0 }, 0)).toEqual({
      total: 0,
      page: 1,
      pageSize: 20,
      nextCursor: null,
    });
  });
});

describe('shape B: page-based', () => {
  it('defaults page to 1 and page_size to 20', () => {
    const { ok, query } = validateQuery(SHAPE_B_QUERY, {});
    expect(ok).toBe(true);
    expect(query).toEqual({ page: 1, page_size: 20 });
  });

  it.each<Record<string, string>>([
    { page: '0' },
    { page: '-1' },
    { page_size: '0' },
    { page_size: '101' },
    { page: '9007199254740992' },
  ])('rejects out-of-range %p', (raw) => {
    expect(validateQuery(SHAPE_B_QUERY, raw).ok).toBe(false);
  });

  it('turns page and page_size into an offset window', () => {
    expect(shapeBWindow({ page: 1, page_size: 20 })).toEqual({ limit: 20, offset: 0 });
    expect(shapeBWindow({ page: 3, page_size: 25 })).toEqual({ limit: 25, offset: 50 });
  });

  it('reports hasNext but not hasPrevious on the first page', () => {
    expect(shapeBPagination(shapeBWindow({ page: 1, page_size: 20 }), 45)).toEqual({
      page: 1,
      pageSize: 20,
      totalPages: 3,
      totalItems: 45,
      hasNext: true,
      hasPrevious: false,
    });
  });

  it('reports hasPrevious but not hasNext on the last page', () => {
    expect(shapeBPagination(shapeBWindow({ page: 3, page_size: 20 }), 45)).toMatchObject({
      page: 3,
      totalPages: 3,
      hasNext: false,
      hasPrevious: true,
    });
  });

  it('reports no next page past the end', () => {
    expect(shapeBPagination(shapeBWindow({ page: 9, page_size: 20 }), 45)).toMatchObject({
      page: 9,
      hasNext: false,
      hasPrevious: true,
    });
  });

  it('gives zero totals and no next or previous page for an empty result', () => {
    expect(shapeBPagination(shapeBWindow({ page: 1, page_size: 20 }), 0)).toEqual({
      page: 1,
      pageSize: 20,
      totalPages: 0,
      totalItems: 0,
      hasNext: false,
      hasPrevious: false,
    });
  });
});

describe('shape C: identity-provider style', () => {
  it('defaults /users to first 0 and max 100', () => {
    const { ok, query } = validateQuery(SHAPE_C_USERS_QUERY, {});
    expect(ok).toBe(true);
    expect(query).toEqual({ first: 0, max: 100 });
  });

  it('defaults /admin/users to page 0 and pageSize 100', () => {
    const { ok, query } = validateQuery(SHAPE_C_ADMIN_USERS_QUERY, {});
    expect(ok).toBe(true);
    expect(query).toEqual({ page: 0, pageSize: 100 });
  });

  it.each<Record<string, string>>([{ first: '-1' }, { max: '0' }, { max: '201' }])('rejects /users query %p', (raw) => {
    expect(validateQuery(SHAPE_C_USERS_QUERY, raw).ok).toBe(false);
  });

  it.each<Record<string, string>>([{ page: '-1' }, { pageSize: '0' }, { pageSize: '201' }])(
    'rejects /admin/users query %p',
    (raw) => {
      expect(validateQuery(SHAPE_C_ADMIN_USERS_QUERY, raw).ok).toBe(false);
    },
  );

  it('accepts the 200 maximum on both endpoints', () => {
    expect(validateQuery(SHAPE_C_USERS_QUERY, { max: '200' }).ok).toBe(true);
    expect(validateQuery(SHAPE_C_ADMIN_USERS_QUERY, { pageSize: '200' }).ok).toBe(true);
  });

  it('turns first/max and the 0-based page into offset windows', () => {
    expect(shapeCUsersWindow({ first: 30, max: 10 })).toEqual({ limit: 10, offset: 30 });
    expect(shapeCAdminUsersWindow({ page: 0, pageSize: 100 })).toEqual({ limit: 100, offset: 0 });
    expect(shapeCAdminUsersWindow({ page: 2, pageSize: 100 })).toEqual({ limit: 100, offset: 200 });
  });

  it('reports hasMore while rows remain and counts the items returned', () => {
    expect(shapeCPage({ limit: 100, offset: 0 }, 100, 250)).toEqual({ first: 0, max: 100, count: 100, hasMore: true });
  });

  it('reports no more on the last, partly filled page', () => {
    expect(shapeCPage({ limit: 100, offset: 200 }, 50, 250)).toEqual({
      first: 200,
      max: 100,
      count: 50,
      hasMore: false,
    });
  });

  it('gives a zero count and hasMore false for an empty result', () => {
    expect(shapeCPage({ limit: 100, offset: 0 }, 0, 0)).toEqual({ first: 0, max: 100, count: 0, hasMore: false });
  });
});

describe('shape D: true opaque cursor', () => {
  const base64url = (text: string) => Buffer.from(text).toString('base64url');

  it('defaults limit to 50 and rejects values outside 1..200', () => {
    const { ok, query } = validateQuery(SHAPE_D_QUERY, {});
    expect(ok).toBe(true);
    expect(query).toEqual({ limit: 50 });
    expect(validateQuery(SHAPE_D_QUERY, { limit: '200' }).ok).toBe(true);
    expect(validateQuery(SHAPE_D_QUERY, { limit: '0' }).ok).toBe(false);
    expect(validateQuery(SHAPE_D_QUERY, { limit: '201' }).ok).toBe(false);
  });

  it('round-trips a resource id through a base64url cursor', () => {
    const cursor = encodeShapeDCursor('res_42/ä');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeShapeDCursor(cursor)).toBe('res_42/ä');
  });

  it('encodes a versioned envelope {v:1,id}', () => {
    const json = Buffer.from(encodeShapeDCursor('res_1'), 'base64url').toString('utf8');
    expect(JSON.parse(json)).toEqual({ v: 1, id: 'res_1' });
  });

  it.each([
    ['not base64url', 'abc+/=='],
    ['not JSON', base64url('hello')],
    ['JSON null', base64url('null')],
    ['a JSON string', base64url('"res_1"')],
    ['an unknown version', base64url('{"v":2,"id":"res_1"}')],
    ['no version', base64url('{"id":"res_1"}')],
    ['a numeric id', base64url('{"v":1,"id":7}')],
    ['an empty id', base64url('{"v":1,"id":""}')],
    ['an offset cursor', '20'],
  ])('rejects a cursor that is %s with a 400 INVALID_REQUEST', (_what, cursor) => {
    expectInvalidRequest(() => decodeShapeDCursor(cursor));
  });

  it('starts from the beginning without a cursor and after the cursor id with one', () => {
    expect(shapeDWindow({ limit: 50 })).toEqual({ limit: 50, afterId: null });
    expect(shapeDWindow({ limit: 50, cursor: encodeShapeDCursor('res_9') })).toEqual({
      limit: 50,
      afterId: 'res_9',
    });
  });

  it('rejects a malformed cursor in the window with a 400 INVALID_REQUEST', () => {
    expectInvalidRequest(() => shapeDWindow({ limit: 50, cursor: '!!!' }));
  });

  it('drops the extra look-ahead row and points the next cursor at the last row sent', () => {
    const rows = ['a', 'b', 'c'].map((id) => ({ id, item: id.toUpperCase() }));
    const page = shapeDPage(rows, { limit: 2, afterId: null });
    expect(page.items).toEqual(['A', 'B']);
    expect(decodeShapeDCursor(page.next_cursor)).toBe('b');
  });

  it('gives an empty next_cursor on the last page, even when it is exactly full', () => {
    const page = shapeDPage(
      ['a', 'b'].map((id) => ({ id, item: id })),
      { limit: 2, afterId: null },
    );
    expect(page).toEqual({ items: ['a', 'b'], next_cursor: '' });
  });

  it('gives an empty next_cursor for an empty result', () => {
    expect(shapeDPage([], { limit: 50, afterId: null })).toEqual({ items: [], next_cursor: '' });
  });

  it('keysetPageSchema holds a page to its items under the given key and next_cursor, nothing else, in type and at run time', () => {
    const schema = keysetPageSchema('widgets', { type: 'integer' } as const);
    const validate = ajv.compile(schema);
    const page: FromSchema<typeof schema> = { widgets: [1, 2], next_cursor: '' };
    expect(validate(page)).toBe(true);
    // @ts-expect-error the items stand under the schema's key
    const otherKey: FromSchema<typeof schema> = { items: [1], next_cursor: '' };
    expect(validate(otherKey)).toBe(false);
    // @ts-expect-error nor another list beside them (a computed key alone would allow one)
    const extraList: FromSchema<typeof schema> = { widgets: [], next_cursor: '', other: [] };
    expect(validate(extraList)).toBe(false);
    expect(validate({ widgets: [1] })).toBe(false);
    expect(validate({ widgets: ['x'], next_cursor: '' })).toBe(false);
  });

  it('walks every row once by following next_cursor (keyset after id)', () => {
    const table = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, item: id }));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const window = shapeDWindow({ limit: 2, cursor });
      const after = table.filter((row) => window.afterId === null || row.id > window.afterId);
      const page = shapeDPage(after.slice(0, window.limit + 1), window);
      seen.push(...page.items);
      cursor = page.next_cursor || undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});

describe('limit/offset (governance actions)', () => {
  it('defaults limit to 50 and offset to 0', () => {
    const { ok, query } = validateQuery(LIMIT_OFFSET_QUERY, {});
    expect(ok).toBe(true);
    expect(query).toEqual({ limit: 50, offset: 0 });
  });

  it.each<Record<string, string>>([{ limit: '0' }, { limit: '201' }, { offset: '-1' }, { offset: '1.5' }])(
    'rejects %p',
    (raw) => {
      expect(validateQuery(LIMIT_OFFSET_QUERY, raw).ok).toBe(false);
    },
  );

  it('uses the offset when no cursor is sent', () => {
    expect(limitOffsetWindow({ limit: 50, offset: 100 })).toEqual({ limit: 50, offset: 100 });
  });

  it('uses the cursor offset instead of the offset when a cursor is sent', () => {
    expect(limitOffsetWindow({ limit: 50, offset: 0, cursor: '150' })).toEqual({ limit: 50, offset: 150 });
  });

  it('rejects a malformed cursor with a 400 INVALID_REQUEST', () => {
    expectInvalidRequest(() => limitOffsetWindow({ limit: 50, offset: 0, cursor: 'next' }));
  });
});
