import { buildOpenApiDocument } from '../../api/openapi/document';
import { defineRoute, successStatus } from '../../api/http/route';
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
    { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'dry_run', in: 'query', required: false, schema: { type: 'boolean' } },
  ]);
  expect(op.requestBody.content['application/json'].schema).toBe(route.body);
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
