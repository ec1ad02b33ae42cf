import Router, { type RouterMiddleware } from '@koa/router';
import type { Knex } from 'knex';
import { recordRefusal, RefusedAction } from '../../core/audit/store';
import type { Principal } from '../../core/auth/principal';
import { ACCESS_CHANGED_CHANNEL, isKeyOutOfForce } from '../../core/auth/store';
import { authorize, unauthorized } from '../auth/authenticate';
import type { AppDeps } from '../deps';
import { rateLimited } from '../../core/errors';
import { withTenant } from '../../db/tenancy';
import type { Release } from '../../core/keyedGate';
import { blockedWhileReadOnly, OtherSuccess, successStatus, type RouteDefinition } from './route';
import { compileBody, compileParams, compileQuery } from './validation';

export const API_PREFIX = '/api/v1';

/** `/forge/molds/{slug}` (OpenAPI, how routes are declared) → `/forge/molds/:slug` (Koa). */
export const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** `/api/v1/forge/runs/1` → `forge`; undefined outside the API. Lower case, as routes match. */
function firstSegment(path: string): string | undefined {
  const start = API_PREFIX.length + 1;
  if (path.length < start || path.slice(0, start).toLowerCase() !== `${API_PREFIX}/`) return undefined;
  const end = path.indexOf('/', start);
  return path.slice(start, end === -1 ? undefined : end).toLowerCase();
}

/** How the routers match paths: case-insensitive, with or without a trailing slash. */
const routerOptions = { prefix: API_PREFIX, sensitive: false, strict: false };

/** A path as the routers match it, for finding the paths without parameters. */
const fixedPathKey = (path: string) => path.toLowerCase().replace(/\/+$/, '');

/** A segment's routes in two routers: those whose path has no parameters (`fixedPaths`), and the others. */
interface SegmentRouters {
  fixedPaths: Set<string>;
  fixed: Router;
  parameterized: Router;
}

/**
 * The tenant's share of this API process: `limits.requests.perSecond` of its requests a second
 * and `concurrentPerTenant` in progress; past either a request waits in line, using no CPU or
 * connection, so one tenant's flood slows only itself, and past `queueWaitMs` it is a 429.
 * Resolves with the release of its place.
 */
async function enterTenantShare(deps: AppDeps, tenantId: string): Promise<Release> {
  const { perSecond, queueWaitMs, concurrentPerTenant } = deps.config.limits.requests;
  const refuse = (why: string) => rateLimited(`Too many requests of this tenant (${why}); retry shortly`, 1);
  if (!(await deps.tenantPace.take(tenantId))) throw refuse(`more than ${perSecond} a second`);
  const release = await deps.tenantRequests.enter(tenantId, queueWaitMs);
  if (!release) throw refuse(`${concurrentPerTenant} in progress, more waiting`);
  return release;
}

/**
 * Mounts every route under /api/v1 with its validators compiled once, at start-up. A handler
 * runs only on input that matched its schemas; what it returns becomes the response body.
 *
 * A Koa router tests a request against each of its routes in turn, so the routes are split by
 * their first segment (`/forge/...`, `/admin/...`), one router each, and a request is tried
 * only against its segment's: a lookup and a dozen tests instead of a test per route.
 */
export function buildApiRouter(routes: RouteDefinition[], deps: AppDeps): RouterMiddleware {
  const segments = new Map<string, SegmentRouters>();
  for (const route of routes) {
    const segment = firstSegment(API_PREFIX + route.path)!;
    let routers = segments.get(segment);
    if (!routers) {
      routers = { fixedPaths: new Set(), fixed: new Router(routerOptions), parameterized: new Router(routerOptions) };
      segments.set(segment, routers);
    }
    const isFixed = !route.path.includes('{');
    if (isFixed) routers.fixedPaths.add(fixedPathKey(API_PREFIX + route.path));
    const router = isFixed ? routers.fixed : routers.parameterized;
    const params = compileParams(route.params);
    const query = compileQuery(route.query);
    const body = compileBody(route.body, route.optionalBody);
    const status = successStatus(route);
    const template = API_PREFIX + route.path;
    const blocked = blockedWhileReadOnly(route);
    const operation = `${route.method} ${template}`;
    router.register(toKoaPath(route.path), [route.method], async (ctx) => {
      ctx.state.route = template;
      const { access } = route;
      // Validation runs after authentication and authorization: a caller without access learns
      // nothing about an endpoint, not even its validation errors.
      const run = (auth: unknown, db: unknown, inTenant: unknown) =>
        route.handler({
          // Copies: the validators coerce and fill defaults in place.
          params: params({ ...ctx.params }),
          query: query({ ...ctx.query }),
          body: body(ctx.request.body),
          deps,
          ctx,
          auth,
          db,
          inTenant,
        } as Parameters<RouteDefinition['handler']>[0]);
      let result: unknown;
      if (access === 'public') {
        result = await run(undefined, undefined, undefined);
      } else {
        // A credential middleware of its own paths may have identified the caller already (the
        // codec's sign-in cookie, api/temporalCodec/signIn.ts); else the Authorization header.
        const identity =
          ctx.state.identity ??
          (await deps.authenticator.identify(ctx.get('authorization') || undefined, access, ctx.ip));
        ctx.state.tenantId = identity.tenantId;
        const release = await enterTenantShare(deps, identity.tenantId);
        try {
          // Writes only, from a short-lived per-tenant cache (core/license/readOnlyTenants.ts):
          // reads never pay for it, and a write seldom does.
          if (blocked) await deps.readOnlyTenants.assertWritable(identity.tenantId);
          const inTenant = <T>(work: (trx: Knex.Transaction) => Promise<T>) =>
            withTenant(deps.db, identity.tenantId, work, deps.authenticator.precondition(identity));
          let auth: Principal | undefined;
          const authorized = (found: Principal) => {
            auth = found;
            authorize(auth, access, operation);
            deps.platformActivity.record(auth);
            return auth;
          };
          const principal = async (trx: Knex.Transaction) =>
            authorized(await deps.authenticator.principal(trx, identity));
          const onDemand = async () => {
            // The handler opens its own transactions. The caller's principal takes one only when
            // it is not known without (a user not cached, an API key).
            const known = deps.authenticator.principalWithoutTransaction(identity);
            const caller = known ? authorized(known) : await inTenant(principal);
            return run(caller, undefined, inTenant);
          };
          result = await (
            route.transaction === 'on-demand'
              ? onDemand()
              : // The whole request runs in one transaction under the caller's tenant.
                inTenant(async (trx) => run(await principal(trx), trx, inTenant))
          ).catch(async (err: unknown) => {
            if (isKeyOutOfForce(err)) throw unauthorized();
            // Written after the rollback, so the failure entry of a refused action survives it.
            if (err instanceof RefusedAction && auth) {
              await recordRefusal(deps.db, auth, err).catch((auditErr: unknown) =>
                ctx.state.log?.error({ err: auditErr }, 'could not record a refused action'),
              );
            }
            throw err;
          });
          if (route.changesAccess) deps.changes.deliver(ACCESS_CHANGED_CHANNEL, identity.tenantId);
        } finally {
          release();
        }
      }
      const answer = result instanceof OtherSuccess ? result : undefined;
      if (answer && !(answer.status in route.responses)) {
        throw new Error(`${route.method} ${route.path} answered ${answer.status}, which it does not declare`);
      }
      ctx.status = answer?.status ?? status;
      if (ctx.status !== 204) ctx.body = answer ? answer.body : result;
    });
  }
  // Each router answers its routes and, for a path it knows under another method, the 405 (or
  // 501) with the Allow header; OPTIONS gets that header. A path without parameters
  // (`/entities/summary`) goes to the router of such paths alone: it would also match the
  // template beside it (`/entities/{id}`), whose methods are not its own.
  const dispatch = (router: Router): RouterMiddleware => {
    const answer = router.routes();
    const allowedMethods = router.allowedMethods();
    return (ctx, next) => answer(ctx, () => allowedMethods(ctx, next));
  };
  const dispatchers = new Map(
    [...segments].map(([segment, { fixedPaths, fixed, parameterized }]) => {
      const [fixedDispatch, parameterizedDispatch] = [dispatch(fixed), dispatch(parameterized)];
      const segmentDispatch: RouterMiddleware = (ctx, next) =>
        (fixedPaths.has(fixedPathKey(ctx.path)) ? fixedDispatch : parameterizedDispatch)(ctx, next);
      return [segment, segmentDispatch];
    }),
  );
  return (ctx, next) => {
    const segment = firstSegment(ctx.path);
    const segmentDispatch = segment === undefined ? undefined : dispatchers.get(segment);
    return segmentDispatch ? segmentDispatch(ctx, next) : next();
  };
}
