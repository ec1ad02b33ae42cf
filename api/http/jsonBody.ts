import type { Middleware } from 'koa';
import { json } from 'co-body';
import { ApiError, invalid } from '../../core/errors';
import type { InputLimits } from '../../core/limitsConfig';
import { onlyWhen } from './onlyWhen';
import { refuseNul } from './validation';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The size and array budgets of one path's bodies, where they differ from every other's. */
export interface BodyBudget {
  limitBytes: number;
  jsonArrayItems: number;
}

/**
 * Parses JSON request bodies into ctx.request.body. Over the limit → 413, malformed → 400,
 * nested deeper than `jsonDepth` or with an array of more than `jsonArrayItems` → 400, holding the
 * NUL character → 400 (told from the text, which names it only as an escape), a body that is not
 * JSON → 415. Requests without a body (most) get `undefined` and pass straight on.
 */
export function jsonBody(
  defaultLimitBytes: number,
  { jsonDepth, jsonArrayItems: defaultArrayItems }: Pick<InputLimits, 'jsonDepth' | 'jsonArrayItems'>,
  /** Bulk writes (an agent's push) by their full path: budgets of their own. */
  bulkBudgets: Record<string, BodyBudget> = {},
): Middleware {
  const readBody: Middleware = async (ctx, next) => {
    if (!ctx.is('application/json', 'application/*+json')) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json');
    }
    const bulk = Object.hasOwn(bulkBudgets, ctx.path) ? bulkBudgets[ctx.path] : undefined;
    const limitBytes = bulk?.limitBytes ?? defaultLimitBytes;
    const jsonArrayItems = bulk?.jsonArrayItems ?? defaultArrayItems;
    const { parsed, raw } = await parse(ctx.req, limitBytes);
    // Before anything walks the value: validation, templates and stores recurse into it, and
    // validating every item of a huge array holds the event loop.
    const over = overJsonBudget(raw, jsonDepth, jsonArrayItems);
    if (over === 'depth') {
      throw invalid(`Request body nests deeper than ${jsonDepth} levels (SHIPYARD_LIMIT_JSON_DEPTH)`, [
        { field: 'body', message: `must nest at most ${jsonDepth} levels of arrays and objects` },
      ]);
    }
    if (over === 'items') {
      throw invalid(
        `Request body has an array of more than ${jsonArrayItems} items (SHIPYARD_LIMIT_JSON_ARRAY_ITEMS)`,
        [{ field: 'body', message: `must hold at most ${jsonArrayItems} items in any one array` }],
      );
    }
    refuseNul('body', parsed, raw);
    ctx.request.body = parsed;
    ctx.request.bodyBytes = Buffer.byteLength(raw);
    ctx.request.rawBody = raw;
    await next();
  };
  return onlyWhen(
    (ctx) => METHODS_WITH_BODY.has(ctx.method) && ctx.request.length !== 0 && hasBody(ctx.req.headers),
    readBody,
  );
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

async function parse(req: Parameters<typeof json>[0], limitBytes: number): Promise<{ parsed: unknown; raw: string }> {
  try {
    return await json(req, { limit: limitBytes, strict: true, returnRawBody: true });
  } catch (err) {
    // raw-body and co-body tag their errors with the HTTP status they mean.
    const status = (err as { status?: number }).status;
    if (status === 413) throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${limitBytes} bytes`);
    if (status === 400) throw new ApiError('INVALID_REQUEST', 'Request body is not valid JSON');
    if (status === 415) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported request body encoding');
    throw err;
  }
}

/** Where the JSON string opened by the quote at `open` closes: the next quote no backslash escapes. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
    if (end === -1 || backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Which budget JSON text is over, if any: more than `maxDepth` arrays and objects open at once, or
 * an array of more than `maxItems` items. One pass over the text (already parsed, so valid);
 * strings are skipped whole (indexOf), so brackets and commas inside them are ignored.
 */
export function overJsonBudget(text: string, maxDepth: number, maxItems: number): 'depth' | 'items' | undefined {
  // Per open container: its items so far in an array, -1 in an object.
  const items: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 0x22 /* " */) {
      i = closingQuote(text, i);
      if (i === -1) return undefined;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      if (items.push(char === 0x5b ? 0 : -1) > maxDepth) return 'depth';
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) items.pop();
    else if (char === 0x2c /* , */ && items.length && items[items.length - 1] >= 0) {
      // Commas separate items: the n-th comma starts item n + 1.
      if (++items[items.length - 1] >= maxItems) return 'items';
    }
  }
  return undefined;
}
