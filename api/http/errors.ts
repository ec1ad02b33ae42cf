import type { Middleware } from 'koa';

/** The error codes of DESIGN.md, each with its one HTTP status. */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BETA_ENDED_READ_ONLY: 423,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field?: string;
  message: string;
}

/** The one error body every endpoint returns. */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details: ErrorDetail[]; request_id: string };
}

/** Throw from anywhere in a request; the error middleware turns it into the envelope. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} not found`);
export const invalid = (message: string, details: ErrorDetail[] = []) =>
  new ApiError('INVALID_REQUEST', message, details);
export const conflict = (message: string) => new ApiError('CONFLICT', message);

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
