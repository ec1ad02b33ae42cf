import type { Logger } from 'pino';
import type { Identity } from '../auth/authenticate';

// What middleware puts on ctx.state, typed once for every handler.
declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    /** The caller, when a middleware of its own paths identified them (the codec's sign-in cookie). */
    identity?: Identity;
    /** Set once the caller is authenticated; scopes the request's database transaction. */
    tenantId?: string;
    /** The template of the route that answered (`/api/v1/forge/runs/{runId}`), for the metrics. */
    route?: string;
  }
  interface Request {
    /** The parsed JSON body (jsonBody middleware); undefined when the request had none. */
    body?: unknown;
    /** The JSON body's size as received, in bytes (for routes with a tighter limit than the app's). */
    bodyBytes?: number;
    /** The JSON body's text as received (a signature over the body is checked against it). */
    rawBody?: string;
  }
}
