import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Knex } from 'knex';
import type { ParameterizedContext } from 'koa';
import type { AgentPrincipal, CallerPrincipal } from '../../core/auth/principal';
import type { Access } from '../auth/authenticate';
import type { AppDeps } from '../deps';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A JSON Schema written `as const`, so its TypeScript type can be derived from it. */
export type Schema = JSONSchema & object;

/**
 * The TypeScript type of a request part, from its schema. While TypeScript is still inferring
 * a route's generics it sees the bare constraint; answering `unknown` then keeps
 * json-schema-to-ts from expanding every possible schema.
 */
type Derive<S> = Schema extends S ? unknown : S extends JSONSchema ? FromSchema<S> : never;

const EMPTY = { type: 'object', properties: {}, additionalProperties: false } as const;
type Empty = typeof EMPTY;

export interface ResponseSpec {
  description: string;
  /** The JSON body: shown in OpenAPI, checked against every response in the test harness. */
  schema?: Schema;
  /**
   * A body that is not JSON (an HTML page, an event stream): instead of `schema`, or beside it
   * when the route answers either (a page of log lines, or their event stream).
   */
  contentType?: string;
  /**
   * The routes this response gives the path parameters of (OpenAPI links), for clients and for
   * schemathesis's stateful phase, which otherwise meets only 404s there: each names a route
   * (`GET /manifests/{id}`) and where each of its parameters comes from, as an OpenAPI runtime
   * expression (`$response.body#/manifest/id`, `$request.path.id`).
   */
  links?: ResponseLink[];
}

export interface ResponseLink {
  to: `${HttpMethod} /${string}`;
  parameters: Record<string, string>;
}

/** Links to each of `routes`, all taking the same path parameters from this response. */
export const linksTo = (routes: ResponseLink['to'][], parameters: Record<string, string>): ResponseLink[] =>
  routes.map((to) => ({ to, parameters }));

/** Timestamps leave the stores as Dates and are serialized as ISO strings. */
type ResponseDerivation = {
  deserialize: [{ pattern: { type: 'string'; format: 'date-time' }; output: Date | string }];
};

/** The spec of a route's success response: its first 2xx, as `successStatus` picks at run time. */
type SuccessSpec<R> = 200 extends keyof R
  ? R[200]
  : 201 extends keyof R
    ? R[201]
    : 202 extends keyof R
      ? R[202]
      : 204 extends keyof R
        ? R[204]
        : never;

/**
 * What a handler returns, from its success response: the JSON schema's type, or nothing for a
 * 204. A body that is not JSON is anything (every other route declares a schema: a unit test
 * holds them to it). While TypeScript is still inferring, `unknown`.
 */
type ResponseBody<R> = number extends keyof R
  ? unknown
  : SuccessSpec<R> extends { schema: infer S }
    ? S extends JSONSchema
      ? FromSchema<S, ResponseDerivation>
      : unknown
    : 204 extends keyof R
      ? void
      : unknown;

/**
 * A handler's answer with another 2xx its route declares than the first (a parked
 * registration's 202 beside the 201): the router sends `body` with `status`, and refuses a
 * status the route does not declare.
 */
export class OtherSuccess<S extends number = number, B = unknown> {
  constructor(
    readonly status: S,
    readonly body: B,
  ) {}
}

/** The authenticated caller a route receives, by its access level. */
type AuthFor<A> = A extends 'public' ? undefined : A extends 'agent' ? AgentPrincipal : CallerPrincipal;

/**
 * How a route uses the database. `request`: the whole handler runs in one transaction under the
 * caller's tenant (`db`). `on-demand`: no transaction is held while the handler runs; it opens
 * short ones with `inTenant` around its reads and writes, so waiting on Temporal or another
 * service never holds a pooled connection.
 */
export type TransactionMode = 'request' | 'on-demand';

export interface HandlerInput<P, Q, B, A = Access, T extends TransactionMode = TransactionMode> {
  params: P;
  query: Q;
  body: B;
  /** Who called (undefined on public routes). */
  auth: AuthFor<A>;
  /** The request's transaction, scoped to the caller's tenant (undefined on public and on-demand routes). */
  db: A extends 'public' ? undefined : T extends 'request' ? Knex.Transaction : undefined;
  /** Runs `work` in a transaction of its own under the caller's tenant, committed when it returns. */
  inTenant: A extends 'public' ? undefined : <R>(work: (trx: Knex.Transaction) => Promise<R>) => Promise<R>;
  deps: AppDeps;
  ctx: ParameterizedContext;
}

/**
 * One endpoint, declared once: its path (OpenAPI style, `{id}`), input schemas, responses and
 * handler. The same declaration drives routing, validation and the OpenAPI document.
 * The handler's return value becomes the body, sent with the first 2xx status of `responses`
 * (or, returned as an OtherSuccess, with another 2xx it declares).
 */
export interface RouteDefinition {
  method: HttpMethod;
  path: string;
  summary: string;
  tag: string;
  /** What the caller needs: declared here, enforced by the router, shown in OpenAPI. */
  access: Access;
  params: Schema;
  query: Schema;
  body?: Schema;
  /** The body may be left out; the handler then gets `{}`. */
  optionalBody?: boolean;
  /** Default `request`. */
  transaction?: TransactionMode;
  /**
   * Writes who may do what in the tenant (role assignments, bundles, team members, roles and
   * group mappings). Database triggers announce such a write to every API process a few
   * milliseconds after it commits; this process also applies it at once, before answering, so
   * the caller's next request sees the change whichever comes first.
   */
  changesAccess?: boolean;
  /** Kept working for old clients, shown as `deprecated: true` in OpenAPI. */
  deprecated?: boolean;
  /**
   * A write a read-only tenant (Beta ended) may still make: license activation. Agent routes
   * need no flag: agent traffic is never blocked. See `blockedWhileReadOnly`.
   */
  readOnlyExempt?: boolean;
  responses: Record<number, ResponseSpec>;
  handler: (input: HandlerInput<unknown, unknown, unknown, Access>) => unknown;
}

/**
 * Whether a read-only tenant gets 423 BETA_ENDED_READ_ONLY from this route: every write of a
 * tenant's caller (any method but GET), unless it is agent traffic or declared exempt. Derived
 * from the declaration, so a new route cannot forget it; the router enforces it.
 */
export const blockedWhileReadOnly = (route: RouteDefinition): boolean =>
  route.method !== 'GET' && route.access !== 'public' && route.access !== 'agent' && !route.readOnlyExempt;

export function defineRoute<
  const P extends Schema = Empty,
  const Q extends Schema = Empty,
  const B extends Schema | undefined = undefined,
  const A extends Access = Access,
  const R extends Record<number, ResponseSpec> = Record<number, ResponseSpec>,
  const T extends TransactionMode = 'request',
>(def: {
  method: HttpMethod;
  path: string;
  summary: string;
  tag: string;
  access: A;
  params?: P;
  query?: Q;
  body?: B;
  optionalBody?: boolean;
  transaction?: T;
  changesAccess?: boolean;
  deprecated?: boolean;
  readOnlyExempt?: boolean;
  responses: R;
  handler: (
    input: HandlerInput<Derive<P>, Derive<Q>, B extends Schema ? Derive<B> : undefined, A, T>,
  ) => NoInfer<ResponseBody<R> | OtherSuccess | Promise<ResponseBody<R> | OtherSuccess>>;
}): RouteDefinition {
  // The generic types above only check the handler against its schemas; at run time a route
  // is the plain declaration.
  const route = def as unknown as Omit<RouteDefinition, 'params' | 'query'> & Partial<RouteDefinition>;
  return { ...route, params: route.params ?? EMPTY, query: route.query ?? EMPTY };
}

/** The status a route answers with on success: its first 2xx response. */
export function successStatus(route: RouteDefinition): number {
  const status = Object.keys(route.responses)
    .map(Number)
    .find((code) => code >= 200 && code < 300);
  if (status === undefined) throw new Error(`${route.method} ${route.path} declares no 2xx response`);
  return status;
}
