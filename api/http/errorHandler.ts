import type { Middleware } from 'koa';
import { ApiError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../../core/errors';

/** The one error body every endpoint returns. */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details: ErrorDetail[]; request_id: string };
}

/**
 * Catches everything thrown below it. ApiErrors keep their code; anything else is a 500 whose
 * body says nothing about the cause (no stack, no SQL) while the log keeps the full error.
 */
export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const apiError = err instanceof ApiError ? err : null;
      if (!apiError) ctx.state.log?.error({ err }, 'unhandled error');
      const code: ErrorCode = apiError?.code ?? 'INTERNAL';
      const body: ErrorEnvelope = {
        error: {
          code,
          message: apiError?.message ?? 'Internal server error',
          details: apiError?.details ?? [],
          request_id: ctx.state.requestId,
        },
      };
      ctx.status = ERROR_STATUS[code];
      ctx.set(apiError?.headers ?? {});
      ctx.body = body;
    }
  };
}
