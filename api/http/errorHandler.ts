import type { FromSchema } from 'json-schema-to-ts';
import type { Context, Middleware } from 'koa';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../../core/errors';
import { databaseBusy } from '../../db/pool';

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

/** The one error body, for `code`. */
export const errorEnvelope = (
  code: ErrorCode,
  message: string,
  details: ErrorEnvelope['error']['details'],
  requestId: string,
): ErrorEnvelope => ({ error: { code, message, details, request_id: requestId } });

/**
 * What no route answered becomes an error envelope. The API's allowedMethods sets the status
 * and the Allow header: 405 for a method the path does not serve, 501 for one the router has
 * never heard of (QUERY, TRACE), which is the same mistake to a client: 405 with Allow. A path
 * no route has is a 404 whatever the method.
 */
function refuseUnanswered(ctx: Context): void {
  if (ctx.body !== undefined && ctx.body !== null) return;
  const allow = ctx.response.get('allow');
  if ((ctx.status === 405 || ctx.status === 501) && allow) {
    throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on this path`, [], { allow });
  }
  if (ctx.status === 404 || ctx.status === 501) throw new ApiError('NOT_FOUND', 'No such endpoint');
}

/** Seconds a client is asked to wait when the database had no room for its request. */
const DATABASE_BUSY_RETRY_AFTER_S = 2;

/** A busy database (no free connection, a statement over its time) as the 503 it is, else null. */
function busyDatabaseError(err: unknown): ApiError | null {
  const busy = databaseBusy(err);
  if (!busy) return null;
  const message =
    busy === 'no-connection'
      ? 'The service is busy: no database connection came free in time; retry shortly'
      : 'The request took longer than the database allows; retry shortly';
  return new ApiError('SERVICE_UNAVAILABLE', message, [], { 'Retry-After': String(DATABASE_BUSY_RETRY_AFTER_S) });
}

/**
 * Catches everything thrown below it, and answers what nothing below answered. ApiErrors keep
 * their code; a busy database is a 503 with Retry-After; anything else is a 500 whose body
 * says nothing about the cause (no stack, no SQL) while the log keeps the full error.
 */
export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      refuseUnanswered(ctx);
    } catch (err) {
      const busy = err instanceof ApiError ? null : busyDatabaseError(err);
      if (busy) ctx.state.log?.warn({ err }, 'database busy');
      const apiError = err instanceof ApiError ? err : busy;
      if (!apiError) ctx.state.log?.error({ err }, 'unhandled error');
      const code: ErrorCode = apiError?.code ?? 'INTERNAL';
      ctx.status = ERROR_STATUS[code];
      ctx.set(apiError?.headers ?? {});
      ctx.body = errorEnvelope(
        code,
        apiError?.message ?? 'Internal server error',
        apiError?.details ?? [],
        ctx.state.requestId,
      );
    }
  };
}
