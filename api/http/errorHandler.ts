import type { FromSchema } from 'json-schema-to-ts';
import type { Middleware } from 'koa';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../../core/errors';

/** The one error body every endpoint returns (`#/components/schemas/Error` in OpenAPI). */
export const errorEnvelopeSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'request_id'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_STATUS) as ErrorCode[], examples: ['INVALID_REQUEST'] },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            required: ['message'],
            additionalProperties: false,
            properties: { field: { type: 'string' }, message: { type: 'string' } },
          },
        },
        request_id: { type: 'string' },
      },
    },
  },
} as const;

export type ErrorEnvelope = FromSchema<typeof errorEnvelopeSchema>;

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
