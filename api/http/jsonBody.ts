import type { Middleware } from 'koa';
import { json } from 'co-body';
import { ApiError, invalid } from '../../core/errors';
import { onlyWhen } from './onlyWhen';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Parses JSON request bodies into ctx.request.body. Over the limit → 413, malformed → 400,
 * nested deeper than `maxDepth` → 400, a body that is not JSON → 415. Requests without a body
 * (most) get `undefined` and pass straight on.
 */
export function jsonBody(limitBytes: number, maxDepth: number): Middleware {
  const readBody: Middleware = async (ctx, next) => {
    if (!ctx.is('application/json', 'application/*+json')) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json');
    }
    const { parsed, raw } = await parse(ctx.req, limitBytes);
    // Before anything walks the value: validation, templates and stores recurse into it.
    if (nestsDeeperThan(raw, maxDepth)) {
      throw invalid(`Request body nests deeper than ${maxDepth} levels (SHIPYARD_LIMIT_JSON_DEPTH)`, [
        { field: 'body', message: `must nest at most ${maxDepth} levels of arrays and objects` },
      ]);
    }
    ctx.request.body = parsed;
    ctx.request.bodyBytes = Buffer.byteLength(raw);
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

/** Whether JSON text opens more than `max` arrays and objects at once; one pass, brackets in strings ignored. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') {
      if (++depth > max) return true;
    } else if (char === ']' || char === '}') depth--;
  }
  return false;
}
