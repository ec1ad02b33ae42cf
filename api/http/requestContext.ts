import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { DefaultState, Middleware } from 'koa';
import type { Logger } from 'pino';
import { recordRequest } from '../metrics/requests';
import { requestIdSource } from './requestIds';

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** An answered request, as its closing log line and the request metrics see it. */
export interface AnsweredRequest {
  requestId: string;
  /** The route template that answered, undefined when none did. */
  route: string | undefined;
  method: string;
  path: string;
  status: number;
  /** From the request reaching the app to its response being ready. */
  durationMs: number;
  tenantId?: string;
}

/** What every request leaves behind: an id echoed as X-Request-Id, a count in the request metrics and one closing log line. */
export class RequestRecorder {
  readonly #nextRequestId = requestIdSource();
  /**
   * `logger` without its redaction, for the closing line alone: that line holds only the fields
   * record() puts there, none a credential, and redacting it was most of its cost.
   */
  readonly #closingLines: Logger;

  constructor(readonly logger: Logger) {
    this.#closingLines = logger.child({}, { redact: [] });
  }

  /** The request's id, set on its response: the caller's X-Request-Id when safe, else a new one. */
  identify(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): string {
    // Node's own request and response, not Koa's accessors: they lower-case and check the
    // header's name on every call, for a name that is a constant.
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : this.#nextRequestId();
    res.setHeader('X-Request-Id', requestId);
    return requestId;
  }

  /** Counts the request in the metrics and writes its closing line. */
  record({ requestId, route, method, path, status, durationMs, tenantId }: AnsweredRequest): void {
    recordRequest(route, method, status, durationMs / 1000);
    this.#closingLines.info(
      {
        request_id: requestId,
        method,
        path,
        status,
        duration_ms: Math.round(durationMs * 10) / 10,
        ...(tenantId !== undefined && { tenant_id: tenantId }),
      },
      'request',
    );
  }
}

/**
 * A request's ctx.state. Its child logger is made the first time something logs through it:
 * most requests log only their closing line, which the recorder writes with the id.
 */
class RequestState implements DefaultState {
  #log: Logger | undefined;
  tenantId?: string;
  route?: string;

  constructor(
    private readonly logger: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.logger.child({ request_id: this.requestId }));
  }
}

/**
 * Gives every request an id and a child logger carrying it; when the response is ready, has the
 * recorder count and log it. First in the chain, so it sees every request's final status, error
 * envelopes included.
 */
export function requestContext(recorder: RequestRecorder): Middleware {
  return async (ctx, next) => {
    const requestId = recorder.identify(ctx.req, ctx.res);
    const state = new RequestState(recorder.logger, requestId);
    ctx.state = state;
    const started = performance.now();
    try {
      await next();
    } finally {
      recorder.record({
        requestId,
        route: state.route,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        durationMs: performance.now() - started,
        tenantId: state.tenantId,
      });
    }
  };
}
