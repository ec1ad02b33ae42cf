import type { ResponseLink, RouteDefinition, Schema } from '../http/route';
import { errorEnvelopeSchema } from '../http/errorHandler';
import { API_PREFIX } from '../http/router';

type SchemaObject = { properties?: Record<string, Schema>; required?: readonly string[] };

function parameters(route: RouteDefinition) {
  const fromSchema = (schema: Schema, where: 'path' | 'query') => {
    const { properties = {}, required = [] } = schema as SchemaObject;
    return Object.entries(properties).map(([name, property]) => ({
      name,
      in: where,
      required: where === 'path' || required.includes(name),
      schema: property,
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

function operation(route: RouteDefinition, routeKeys: Set<string>) {
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, { description, schema, contentType, links }]) => [
      status,
      {
        description,
        ...(schema
          ? { content: { 'application/json': { schema } } }
          : contentType && { content: { [contentType]: {} } }),
        ...(links && { links: linkObjects(route, links, routeKeys) }),
      },
    ]),
  );
  return {
    operationId: operationId(route.method, route.path),
    summary: route.summary,
    tags: [route.tag],
    parameters: parameters(route),
    ...(route.access !== 'public' && {
      security: [{ [route.access === 'agent' ? 'agentToken' : 'bearer']: [] }],
      'x-required-access': route.access,
      description: `Requires: ${route.access === 'authenticated' ? 'any authenticated caller' : route.access === 'agent' ? 'an agent token' : route.access === 'operator' ? 'a platform operator (an admin of the platform tenant)' : `the \`${route.access}\` permission`}.`,
    }),
    ...(route.body && {
      requestBody: { required: !route.optionalBody, content: { 'application/json': { schema: route.body } } },
    }),
    responses: {
      ...responses,
      ...(route.access !== 'public' && {
        429: sharedAnswer(route, 429, TENANT_SHARE_FULL),
        503: sharedAnswer(route, 503, SERVICE_BUSY),
      }),
      default: { description: 'Any error, in the one envelope every endpoint uses', content: errorContent },
    },
  };
}

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
      schemas: { Error: errorEnvelopeSchema },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token (JWT) or an API key (shp_svc_…)' },
        agentToken: { type: 'http', scheme: 'bearer', description: 'A cluster agent token (shp_agt_…)' },
      },
    },
  };
}
