import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { compileBody, refuseNul } from '../../api/http/validation';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { NO_NUL_PATTERN, withoutNul } from '../../api/openapi/inputSchemas';
import { withApiReference } from '../../api/openapi/routes';
import { apiRoutes } from '../../api/routes';

const doc = buildOpenApiDocument(withApiReference(apiRoutes));
const ajv = addFormats(new Ajv({ strict: false }));

/** The body schema the document gives an operation, checkable on its own (its $refs resolve). */
function documentedBody(method: string, path: string) {
  const operation = (doc.paths[`/api/v1${path}`] as Record<string, any>)[method.toLowerCase()]; // eslint-disable-line @typescript-eslint/no-explicit-any
  return ajv.compile({ ...operation.requestBody.content['application/json'].schema, components: doc.components });
}

/** Whether the API takes the body: its NUL check as the body is read, then the route's validator. */
const validatorAccepts = (method: string, path: string, body: unknown) => {
  const route = apiRoutes.find((r) => r.method === method && r.path === path)!;
  try {
    refuseNul('body', body);
    compileBody(route.body, route.optionalBody)(structuredClone(body));
    return true;
  } catch {
    return false;
  }
};

test.each([
  ['POST', '/admin/teams', { name: 'Ops', metadata: { 'on\u0000call': 'yes' } }],
  ['POST', '/admin/teams', { name: 'Ops', metadata: { rota: [{ who: 'ann\u0000' }] } }],
  ['POST', '/admin/teams', { name: 'Ops\u0000' }],
  ['PUT', '/integrations/{id}', { config: { nested: { 'x\u0000': 1 } } }],
])(
  'the document refuses the NUL the validator refuses (%s %s), and both take the same body without it',
  (method, path, body) => {
    const documented = documentedBody(method, path);
    const clean = JSON.parse(JSON.stringify(body).replaceAll('\\u0000', ''));
    expect(validatorAccepts(method, path, body)).toBe(false);
    expect(documented(body)).toBe(false);
    expect(validatorAccepts(method, path, clean)).toBe(true);
    expect(documented(clean)).toBe(true);
  },
);

test('a string keeps its own pattern beside the NUL rule; closed values and formats are left as they are', () => {
  expect(withoutNul({ type: 'string', pattern: '\\S' })).toEqual({
    type: 'string',
    pattern: '\\S',
    allOf: [{ pattern: NO_NUL_PATTERN }],
  });
  expect(withoutNul({ type: 'string', format: 'uuid' })).toEqual({ type: 'string', format: 'uuid' });
  expect(withoutNul({ type: 'string', enum: ['a'] })).toEqual({ type: 'string', enum: ['a'] });
  expect(withoutNul({ type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false })).toEqual({
    type: 'object',
    properties: { a: { type: 'integer' } },
    additionalProperties: false,
  });
});
