import { blockedWhileReadOnly, type ResponseLink, type RouteDefinition, type Schema } from '../http/route';
import { errorEnvelopeSchema } from '../http/errorHandler';
import { API_PREFIX } from '../http/router';
import { JSON_WITHOUT_NUL_NAME, jsonWithoutNulSchema, withoutNul } from './inputSchemas';

type SchemaObject = { properties?: Record<string, Schema>; required?: readonly string[] };

function parameters(route: RouteDefinition) {
  const fromSchema = (schema: Schema, where: 'path' | 'query') => {
    const { properties = {}, required = [] } = schema as SchemaObject;
    return Object.entries(properties).map(([name, property]) => ({
      name,
      in: where,
      required: where === 'path' || required.includes(name),
      schema: withoutNul(property),
    }));
  };
  return [...fromSchema(route.params, 'path'), ...fromSchema(route.query, 'query')];
}

const operationId = (method: string, path: string) =>
  `${method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, c: string) => c.toUpperCase())}`;

const pathParameters = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);

/**
 * A response's links as OpenAPI link objects, by the operationId of their target. A link to a
 * route that does not exist, or whose parameters are not exactly the target's path parameters,
 * stops the document from being built.
 */
function linkObjects(from: RouteDefinition, links: ResponseLink[], routeKeys: Set<string>) {
  return Object.fromEntries(
    links.map(({ to, parameters }) => {
      const [method, path] = to.split(' ');
      const expected = pathParameters(path).sort().join(',');
      if (!routeKeys.has(to) || Object.keys(parameters).sort().join(',') !== expected) {
        throw new Error(`${from.method} ${from.path} links to ${to}, which is no route taking exactly {${expected}}`);
      }
      const target = operationId(method, path);
      return [target, { operationId: target, parameters }];
    }),
  );
}

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/**
 * An answer every route past authentication may give, whatever it declares itself: `reason`,
 * after the route's own description of that status when it has one, with Retry-After.
 */
function sharedAnswer(route: RouteDefinition, status: 429 | 503, reason: string) {
  const own = route.responses[status]?.description;
  return {
    description: own ? `${own}; or: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}` : reason,
    headers: {
      'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
    },
    content: errorContent,
  };
}

/** Past authentication: the tenant's share of the process (api/http/router.ts) and a busy service. */
const TENANT_SHARE_FULL =
  'The tenant is over its share of this process (SHIPYARD_TENANT_REQUESTS_PER_SECOND, SHIPYARD_TENANT_CONCURRENT_REQUESTS) with more waiting in line';
const SERVICE_BUSY =
  'The service is busy: no database connection came free in time, a statement ran over its time limit, or too many API-key checks were under way';

/** Who may call a route, in words. */
const whoMayCall = (access: Exclude<RouteDefinition['access'], 'public'>) =>
  access === 'authenticated'
    ? 'any authenticated caller'
    : access === 'agent'
      ? 'an agent token'
      : access === 'operator'
        ? 'a platform operator (an admin of the platform tenant)'
        : `the \`${access}\` permission`;

/**
 * The 4xx answers a route gives by what it declares, as the router and its middleware enforce
 * them: every route validates its path, query and body (a route without a body schema refuses
 * any body); one past authentication refuses a caller without credentials, and one needing a
 * permission a caller without it; a path parameter names something that may not exist; a body
 * may be over the size limit or not JSON. A status the route declares itself keeps its own,
 * more precise description.
 */
function derivedRefusals(route: RouteDefinition): Record<number, string> {
  const { access } = route;
  const refusals: Record<number, string> = {
    400: 'The request does not match this operation: a path parameter, the query or the body',
  };
  if (access !== 'public') refusals[401] = 'No credentials, or credentials that are not (or no longer) valid';
  if (access !== 'public' && access !== 'authenticated' && access !== 'agent') {
    refusals[403] = `The caller does not have ${whoMayCall(access)}`;
  }
  if (pathParameters(route.path).length > 0) refusals[404] = 'Nothing of this tenant has that path parameter';
  if (blockedWhileReadOnly(route)) {
    refusals[423] =
      'BETA_ENDED_READ_ONLY: the Beta period of the tenant has ended; it is read-only until a paid license is activated';
  }
  if (route.body) {
    refusals[413] = 'The body is over the request body limit (BODY_LIMIT)';
    refusals[415] = 'The body is not application/json';
  }
  return refusals;
}

function operation(route: RouteDefinition, routeKeys: Set<string>) {
  const refusals = Object.fromEntries(
    Object.entries(derivedRefusals(route)).map(([status, description]) => [
      status,
      { description, content: errorContent },
    ]),
  );
  const declared = Object.fromEntries(
    Object.entries(route.responses).map(([status, { description, schema, contentType, links }]) => [
      status,
      {
        description,
        ...((schema || contentType) && {
          content: {
            ...(schema && { 'application/json': { schema } }),
            ...(contentType && { [contentType]: {} }),
          },
        }),
        // An error the route declares without a schema is the one envelope, as every error is.
        ...(!schema && !contentType && Number(status) >= 400 && { content: errorContent }),
        ...(links && { links: linkObjects(route, links, routeKeys) }),
      },
    ]),
  );
  return {
    operationId: operationId(route.method, route.path),
    summary: route.summary,
    tags: [route.tag],
    ...(route.deprecated && { deprecated: true }),
    parameters: parameters(route),
    ...(route.access === 'public'
      ? { security: [] }
      : {
          security: [{ [securityScheme(route)]: [] }],
          'x-required-access': route.access,
          description: `Requires: ${whoMayCall(route.access)}.`,
        }),
    ...(route.body && {
      requestBody: {
        required: !route.optionalBody,
        content: { 'application/json': { schema: withoutNul(route.body) } },
      },
    }),
    responses: {
      ...refusals,
      ...declared,
      ...(route.access !== 'public' && {
        429: sharedAnswer(route, 429, TENANT_SHARE_FULL),
        503: sharedAnswer(route, 503, SERVICE_BUSY),
      }),
      default: { description: 'Any error, in the one envelope every endpoint uses', content: errorContent },
    },
  };
}

const securityScheme = (route: RouteDefinition) => (route.access === 'agent' ? 'agentToken' : 'bearer');

const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'A session token (JWT) or an API key (shp_svc_…)' },
  agentToken: { type: 'http', scheme: 'bearer', description: 'A cluster agent token (shp_agt_…)' },
} as const;

/** The OpenAPI 3.1 document, derived from the same route declarations that validate requests. */
export function buildOpenApiDocument(routes: RouteDefinition[]) {
  const routeKeys = new Set(routes.map((route) => `${route.method} ${route.path}`));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    (paths[API_PREFIX + route.path] ??= {})[route.method.toLowerCase()] = operation(route, routeKeys);
  }
  return {
    openapi: '3.1.0' as const,
    info: {
      title: 'Shipyard API',
      version: '1.0.0',
      description: 'Multi-tenant software catalog and internal developer platform.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorEnvelopeSchema, [JSON_WITHOUT_NUL_NAME]: jsonWithoutNulSchema },
      // Only the schemes some operation uses.
      securitySchemes: Object.fromEntries(
        [...new Set(routes.filter((r) => r.access !== 'public').map(securityScheme))].map((name) => [
          name,
          SECURITY_SCHEMES[name],
        ]),
      ),
    },
  };
}
