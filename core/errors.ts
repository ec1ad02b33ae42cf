// The errors of the domain, each with its code and HTTP status from DESIGN.md. Any layer throws
// them; the HTTP layer renders them as the error envelope (api/http/errorHandler.ts).

/** The error codes of DESIGN.md, each with its one HTTP status. */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BETA_ENDED_READ_ONLY: 423,
  RATE_LIMITED: 429,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field?: string;
  message: string;
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
/** A 429: the caller is over one of its limits, and may try again after `retryAfterSeconds`. */
export const rateLimited = (message: string, retryAfterSeconds: number, details: ErrorDetail[] = []) =>
  new ApiError('RATE_LIMITED', message, details, { 'Retry-After': String(retryAfterSeconds) });
