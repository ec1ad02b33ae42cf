import { buildOpenApiDocument } from '../../api/openapi/document';
import { defineRoute, successStatus } from '../../api/http/route';
import { withoutNul } from '../../api/openapi/inputSchemas';
import { withApiReference } from '../../api/openapi/routes';
import { apiRoutes } from '../../api/routes';
import { toKoaPath } from '../../api/http/router';

const route = defineRoute({
  method: 'PUT',
  path: '/forge/molds/{slug}',
  tag: 'Forge',
  access: 'forge:write',
  summary: 'Update a mold',
  params: { type: 'object', properties: { slug: { type: 'string' } }, required: ['slug'] },
  query: { type: 'object', properties: { dry_run: { type: 'boolean' } } },
  body: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
  responses: { 200: { description: 'updated' } },
  handler: () => ({}),
});

test('OpenAPI paths become Koa paths', () => {
  expect(toKoaPath('/teams/{id}/members/{memberId}')).toBe('/teams/:id/members/:memberId');
});

test('a route declaration becomes an OpenAPI operation with its parameters, body and the error envelope', () => {
  const doc = buildOpenApiDocument([route]);
  const op = (doc.paths['/api/v1/forge/molds/{slug}'] as Record<string, any>).put; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(op.operationId).toBe('putForgeMoldsSlug');
  expect(op.tags).toEqual(['Forge']);
  expect(op.parameters).toEqual([
    { name: 'slug', in: 'path', required: true, schema: { type: 'string', pattern: '^[^\\u0000]*$' } },
    { name: 'dry_run', in: 'query', required: false, schema: { type: 'boolean' } },
  ]);
  expect(op.requestBody.content['application/json'].schema).toEqual(withoutNul(route.body!));
  expect(op.responses.default.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  expect(doc.components.schemas.Error.required).toEqual(['error']);
});

test('every route declares its success response: a JSON schema, or the media type of a body that is not JSON', () => {
  const undeclared = withApiReference(apiRoutes)
    .filter((r) => {
      const status = successStatus(r);
      const spec = r.responses[status];
      return status !== 204 && !spec.schema && !spec.contentType;
    })
    .map((r) => `${r.method} ${r.path}`);
  expect(undeclared).toEqual([]);
});

test('a response links to the routes it gives path parameters to, by their operationId', () => {
  const created = defineRoute({
    method: 'POST',
    path: '/forge/molds',
    tag: 'Forge',
    access: 'forge:write',
    summary: 'Create a mold',
    responses: {
      201: {
        description: 'created',
        links: [{ to: 'PUT /forge/molds/{slug}', parameters: { slug: '$response.body#/slug' } }],
      },
    },
    handler: () => ({}),
  });
  const doc = buildOpenApiDocument([created, route]);
  const op = (doc.paths['/api/v1/forge/molds'] as Record<string, any>).post; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(op.responses[201].links).toEqual({
    putForgeMoldsSlug: { operationId: 'putForgeMoldsSlug', parameters: { slug: '$response.body#/slug' } },
  });
  // A link to no route, or one that does not give exactly the target's path parameters, stops the build.
  const badLink = (
    links: { to: 'PUT /forge/molds/{slug}' | 'GET /nowhere/{slug}'; parameters: Record<string, string> }[],
  ) => buildOpenApiDocument([{ ...created, responses: { 201: { description: 'created', links } } }, route]);
  expect(() => badLink([{ to: 'GET /nowhere/{slug}', parameters: { slug: '$response.body#/slug' } }])).toThrow(
    'POST /forge/molds links to GET /nowhere/{slug}, which is no route taking exactly {slug}',
  );
  expect(() => badLink([{ to: 'PUT /forge/molds/{slug}', parameters: { id: '$response.body#/id' } }])).toThrow(
    'which is no route taking exactly {slug}',
  );
});

test('the API document builds with every link resolved, and the creating routes link to what they create', () => {
  const doc = buildOpenApiDocument(withApiReference(apiRoutes));
  const linksOf = (path: string, method: string, status: number) =>
    Object.keys((doc.paths[`/api/v1${path}`] as Record<string, any>)[method].responses[status].links ?? {}); // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(linksOf('/manifests', 'post', 200)).toEqual(['getManifestsId', 'putManifestsId', 'deleteManifestsId']);
  expect(linksOf('/admin/teams/{id}/members', 'post', 201)).toEqual(['deleteAdminTeamsIdMembersMemberId']);
  expect(linksOf('/forge/runs', 'post', 201)).toContain('postForgeRunsRunIdCancel');
});

test('every authenticated operation declares the busy-database 503 with Retry-After, keeping its own 503 reason', () => {
  const doc = buildOpenApiDocument(withApiReference(apiRoutes));
  const operations = Object.values(doc.paths).flatMap((methods) => Object.values(methods)) as {
    'x-required-access'?: string;
    responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
  }[];
  const authenticated = operations.filter((op) => op['x-required-access']);
  expect(authenticated.length).toBeGreaterThan(50);
  for (const op of authenticated) expect(op.responses['503'].headers).toHaveProperty('Retry-After');
  const runStart = (doc.paths['/api/v1/forge/runs'] as Record<string, (typeof operations)[0]>).post;
  expect(runStart.responses['503'].description).toMatch(/^The workflow could not be started.*database connection/);
});

test('every operation documents the 4xx its declaration gives: 400 always, 401/403 by access, 404 by path parameter, 413/415 by body, 423 on a write the Beta read-only window blocks', () => {
  const doc = buildOpenApiDocument(withApiReference(apiRoutes));
  type Operation = { security: unknown[]; responses: Record<string, unknown>; 'x-required-access'?: string };
  const operations = Object.values(doc.paths).flatMap((methods) => Object.values(methods) as Operation[]);
  const codes = (op: Operation) => Object.keys(op.responses).filter((status) => status.startsWith('4'));
  for (const op of operations) expect(codes(op)).toContain('400');
  const publicOps = operations.filter((op) => !op['x-required-access']);
  expect(publicOps.length).toBeGreaterThan(0);
  for (const op of publicOps) {
    expect(op.security).toEqual([]);
    // No bearer token to refuse: a 401 only where the route declares its own credential (the
    // source-host receiver's signature), never the derived one.
    const unauthorized = op.responses['401'] as { description: string } | undefined;
    expect(unauthorized?.description ?? '').not.toMatch(/^No credentials/);
  }
  expect(publicOps.filter((op) => op.responses['401'])).toHaveLength(1);
  for (const op of operations.filter((op) => op['x-required-access'])) expect(codes(op)).toContain('401');

  const op = (doc: ReturnType<typeof buildOpenApiDocument>, path: string, method: string) =>
    (doc.paths[path] as Record<string, Operation>)[method];
  const mold = op(buildOpenApiDocument([route]), '/api/v1/forge/molds/{slug}', 'put');
  expect(codes(mold)).toEqual(['400', '401', '403', '404', '413', '415', '423', '429']);
  const readOnlyAnswer = (method: 'GET' | 'PUT', extra: object) =>
    codes(
      op(buildOpenApiDocument([{ ...route, method, ...extra }]), '/api/v1/forge/molds/{slug}', method.toLowerCase()),
    );
  expect(readOnlyAnswer('GET', {})).not.toContain('423');
  expect(readOnlyAnswer('PUT', { access: 'agent' })).not.toContain('423');
  expect(readOnlyAnswer('PUT', { readOnlyExempt: true })).not.toContain('423');
  // A status the route declares keeps its own description.
  const declared = buildOpenApiDocument([
    { ...route, responses: { ...route.responses, 404: { description: 'No mold with that slug' } } },
  ]);
  expect(op(declared, '/api/v1/forge/molds/{slug}', 'put').responses[404]).toEqual({
    description: 'No mold with that slug',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
});

test('only the security schemes some operation uses are in the document', () => {
  expect(Object.keys(buildOpenApiDocument([route]).components.securitySchemes)).toEqual(['bearer']);
});

test('a response that is JSON or another media type (a log page or its event stream) lists both', () => {
  const doc = buildOpenApiDocument(withApiReference(apiRoutes));
  const logs = (doc.paths['/api/v1/forge/runs/{runId}/logs'] as Record<string, any>).get; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(Object.keys(logs.responses[200].content)).toEqual(['application/json', 'text/event-stream']);
});
