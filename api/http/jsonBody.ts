import type { Middleware } from 'koa';
import { json } from 'co-body';
import { ApiError } from '../../core/errors';
import { onlyWhen } from './onlyWhen';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Parses JSON request bodies into ctx.request.body. Over the limit → 413, malformed → 400,
 * a body that is not JSON → 415. Requests without a body (most) get `undefined` and pass
 * straight on.
 */
export function jsonBody(limitBytes: number): Middleware {
  const readBody: Middleware = async (ctx, next) => {
    if (!ctx.is('application/json', 'application/*+json')) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be application/json');
    }
    const { parsed, raw } = await parse(ctx.req, limitBytes);
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
