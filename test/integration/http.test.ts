import { apiRoutes } from '../../api/routes';
import { defineRoute, OtherSuccess } from '../../api/http/route';
import { request } from 'node:http';
import { connect } from 'node:net';
import { callApi, jsonOf, sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// Routes that exist only here, to drive the shared middleware chain: validation, errors, limits.
const probeRoutes = [
  defineRoute({
    method: 'POST',
    path: '/echo/{name}',
    tag: 'Test',
    access: 'public',
    summary: 'echo',
    params: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' } }, required: ['name'] },
    query: {
      type: 'object',
      properties: { times: { type: 'integer', minimum: 1, maximum: 3, default: 1 } },
      additionalProperties: false,
    },
    body: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    responses: {
      201: {
        description: 'echoed',
        schema: {
          type: 'object',
          required: ['name', 'text'],
          additionalProperties: false,
          properties: { name: { type: 'string' }, text: { type: 'string' } },
        },
      },
    },
    handler: ({ params, query, body }) => ({ name: params.name, text: body.text.repeat(query.times ?? 1) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/answer/{status}',
    tag: 'Test',
    access: 'public',
    summary: 'answers with the status it is asked for',
    params: { type: 'object', properties: { status: { type: 'integer' } }, required: ['status'] },
    responses: {
      200: { description: 'the first 2xx', schema: { type: 'object', properties: { first: { type: 'boolean' } } } },
      202: { description: 'another 2xx', schema: { type: 'object', properties: { other: { type: 'boolean' } } } },
    },
    handler: ({ params }) =>
      params.status === 200 ? { first: true } : new OtherSuccess(params.status, { other: true }),
  }),
  defineRoute({
    method: 'GET',
    path: '/explode',
    tag: 'Test',
    access: 'public',
    summary: 'fails unexpectedly',
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('relation "secret_table" does not exist at /srv/app/db.ts:42');
    },
  }),
];

let api: TestApi;
beforeAll(async () => {
  const deps = await testDeps(testConfig({ bodyLimitBytes: 1024 }));
  api = await startApi({ deps, routes: [...apiRoutes, ...probeRoutes] });
});
afterAll(() => api.close());

const post = (path: string, body: string, contentType = 'application/json') =>
  fetch(`${api.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });

/** A request with any method: fetch refuses some (TRACE) and node:http sends them as they are. */
function rawRequest(
  method: string,
  path: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method }, async (res) => {
      let body = '';
      for await (const chunk of res) body += chunk;
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
    });
    req.on('error', reject).end();
  });
}

function expectEnvelope(json: { error: Record<string, unknown> }, code: string) {
  expect(json.error).toEqual(
    expect.objectContaining({
      code,
      message: expect.any(String),
      details: expect.any(Array),
      request_id: expect.any(String),
    }),
  );
}

describe('HTTP foundation', () => {
  test('a valid request reaches its handler with coerced query values and answers with the declared status', async () => {
    const res = await post('/api/v1/echo/ann?times=2', JSON.stringify({ text: 'hi' }));
    expect(res.status).toBe(201);
    expect(await jsonOf(res)).toEqual({ name: 'ann', text: 'hihi' });
  });

  test('an unknown route is a 404 in the error envelope, with the request id also in the header', async () => {
    const res = await fetch(`${api.url}/api/v1/no-such-thing`);
    expect(res.status).toBe(404);
    const json = await jsonOf(res);
    expectEnvelope(json, 'NOT_FOUND');
    expect(res.headers.get('x-request-id')).toBe(json.error.request_id);
  });

  test('a known path with the wrong method is a 405 naming the allowed methods', async () => {
    const res = await fetch(`${api.url}/api/v1/system`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
    expectEnvelope(await jsonOf(res), 'METHOD_NOT_ALLOWED');
  });

  test('a method the router does not know (QUERY, TRACE) on a known path is a 405 with Allow, and a 404 on an unknown path', async () => {
    for (const method of ['QUERY', 'TRACE']) {
      const known = await rawRequest(method, '/api/v1/system');
      expect({ method, status: known.status }).toEqual({ method, status: 405 });
      expect(known.headers.allow).toContain('GET');
      expectEnvelope(JSON.parse(known.body), 'METHOD_NOT_ALLOWED');
      const unknown = await rawRequest(method, '/api/v1/no-such-thing');
      expect({ method, status: unknown.status }).toEqual({ method, status: 404 });
      expectEnvelope(JSON.parse(unknown.body), 'NOT_FOUND');
    }
  });

  test('a path without parameters advertises only its own methods, not those of the `{id}` template beside it', async () => {
    const allow = async (path: string) => (await rawRequest('OPTIONS', path)).headers.allow;
    expect(await allow('/api/v1/entities/summary')).toBe('HEAD, GET');
    expect(await allow('/api/v1/manifests/validate')).toBe('POST');
    expect(await allow('/api/v1/Manifests/Validate/')).toBe('POST');
    // The template still answers for every other value of its parameter.
    expect(await allow('/api/v1/manifests/anything')).toBe('HEAD, GET, PUT, DELETE');
    const put = await rawRequest('PUT', '/api/v1/entities/summary');
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('HEAD, GET');
  });

  // The API's routes are split into one router per first segment (api/http/router.ts): a path
  // reaches its segment's routes however a single router would have matched it.
  test('routes match by their first segment as one router would: any case, a trailing slash, nothing near', async () => {
    const statuses = async (paths: string[]) =>
      Promise.all(paths.map(async (path) => [path, (await fetch(`${api.url}${path}`)).status]));
    // 401: the route was found, and asks who calls.
    expect(await statuses(['/api/v1/system', '/api/v1/SYSTEM', '/API/V1/System/', '/api/v1/system/'])).toEqual([
      ['/api/v1/system', 401],
      ['/api/v1/SYSTEM', 401],
      ['/API/V1/System/', 401],
      ['/api/v1/system/', 401],
    ]);
    expect(await statuses(['/api/v1/systems', '/api/v1system', '/api/v1', '/api/v1/', '/api/v1/system/x'])).toEqual([
      ['/api/v1/systems', 404],
      ['/api/v1system', 404],
      ['/api/v1', 404],
      ['/api/v1/', 404],
      ['/api/v1/system/x', 404],
    ]);
  });

  test('a NUL character anywhere in the input (body value or key, query, path) is a 400 naming the field, never a database error', async () => {
    const cases: [string, string, string][] = [
      ['/api/v1/echo/ann', JSON.stringify({ text: 'a\u0000b' }), 'body.text'],
      ['/api/v1/echo/ann', JSON.stringify({ text: 'ok', ['x\u0000']: 1 }), 'body.x\u0000'],
      ['/api/v1/echo/ann?times=1%00', JSON.stringify({ text: 'ok' }), 'query.times'],
      ['/api/v1/echo/a%00b', JSON.stringify({ text: 'ok' }), 'params.name'],
    ];
    for (const [path, body, field] of cases) {
      const res = await post(path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect((await jsonOf(res)).error.details).toEqual([
        { field, message: 'must not contain the NUL character (\\u0000)' },
      ]);
    }
    // Text that only looks like the escape (a backslash, then u0000) holds no NUL and is taken.
    const lookalike = await post('/api/v1/echo/ann', JSON.stringify({ text: '\\u0000' }));
    expect(lookalike.status).toBe(201);
    // A real route whose value would otherwise reach PostgreSQL (text columns refuse NUL).
    const { token } = await sessionToken({ tenant: `nul-${Date.now()}`, email: 'admin@nul.test', roles: ['admin'] });
    const team = await callApi(api, token, 'POST', '/admin/teams', { name: 'Nul', description: 'before\u0000after' });
    expect(team.status).toBe(400);
    expect(team.body.error.details[0].field).toBe('body.description');
  });

  test('malformed JSON is a 400 INVALID_REQUEST', async () => {
    const res = await post('/api/v1/echo/ann', '{"text": ');
    expect(res.status).toBe(400);
    expectEnvelope(await jsonOf(res), 'INVALID_REQUEST');
  });

  test('a body over the configured limit is a 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await post('/api/v1/echo/ann', JSON.stringify({ text: 'x'.repeat(2048) }));
    expect(res.status).toBe(413);
    expectEnvelope(await jsonOf(res), 'PAYLOAD_TOO_LARGE');
  });

  test('a non-JSON body is a 415', async () => {
    const res = await post('/api/v1/echo/ann', 'text=hi', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    expectEnvelope(await jsonOf(res), 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('unknown body fields, missing fields, bad params and out-of-range query values are 400s with per-field details', async () => {
    const unknownField = await post('/api/v1/echo/ann', JSON.stringify({ text: 'hi', admin: true }));
    expect(unknownField.status).toBe(400);
    expect((await jsonOf(unknownField)).error.details).toEqual([
      { field: 'body.admin', message: 'is not an allowed field' },
    ]);

    const missing = await post('/api/v1/echo/ann', JSON.stringify({}));
    expect((await jsonOf(missing)).error.details).toEqual([expect.objectContaining({ field: 'body.text' })]);

    const badParam = await post('/api/v1/echo/ANN', JSON.stringify({ text: 'hi' }));
    expect(badParam.status).toBe(400);
    expect((await jsonOf(badParam)).error.details[0].field).toBe('params.name');

    const outOfRange = await post('/api/v1/echo/ann?times=9', JSON.stringify({ text: 'hi' }));
    expect(outOfRange.status).toBe(400);
    expect((await jsonOf(outOfRange)).error.details[0].field).toBe('query.times');

    const noBody = await fetch(`${api.url}/api/v1/echo/ann`, { method: 'POST' });
    expect(noBody.status).toBe(400);
  });

  test('an unexpected failure is a 500 that leaks neither the message nor a stack', async () => {
    const res = await fetch(`${api.url}/api/v1/explode`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toMatch(/secret_table|db\.ts|at /);
    expectEnvelope(JSON.parse(text), 'INTERNAL');
  });

  test('a safe caller-supplied request id is kept; an unsafe one is replaced', async () => {
    const kept = await fetch(`${api.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await fetch(`${api.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("a request Node's parser refuses still gets the error envelope: 431 for a head over the size limit, 400 for one that is not HTTP", async () => {
    const huge = await fetch(`${api.url}/api/v1/search?q=${'x'.repeat(20 * 1024)}`);
    expect(huge.status).toBe(431);
    expect(huge.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await jsonOf(huge);
    expectEnvelope(body, 'REQUEST_HEADERS_TOO_LARGE');
    expect(body.error.request_id).toBe(huge.headers.get('x-request-id'));

    const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
    socket.end('NOT HTTP AT ALL\r\n\r\n');
    let raw = '';
    for await (const chunk of socket) raw += chunk;
    const [head, text] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expectEnvelope(JSON.parse(text), 'INVALID_REQUEST');
  });

  test('/healthz answers at the root, outside /api/v1', async () => {
    const res = await fetch(`${api.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe('15');
    expect(await jsonOf(res)).toEqual({ status: 'ok' });
  });

  test('/healthz answers HEAD without a body, and another method with a 405 naming GET and HEAD', async () => {
    const head = await fetch(`${api.url}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const post = await fetch(`${api.url}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expectEnvelope(await jsonOf(post), 'METHOD_NOT_ALLOWED');
  });
});

describe('API reference', () => {
  test('the OpenAPI document lists every declared route with its schemas', async () => {
    const res = await fetch(`${api.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await jsonOf(res);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/v1/system'].get.responses['200'].content['application/json'].schema.required).toContain(
      'worker_pools',
    );
    const echo = doc.paths['/api/v1/echo/{name}'].post;
    expect(echo.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'name', in: 'path', required: true }),
        expect.objectContaining({ name: 'times', in: 'query', required: false }),
      ]),
    );
    expect(echo.requestBody.content['application/json'].schema.required).toEqual(['text']);
  });

  test('the reference page is HTML whose assets are served locally from the npm package', async () => {
    const page = await fetch(`${api.url}/api/v1/reference`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset.startsWith('/api/v1/reference/assets/')).toBe(true);
      const res = await fetch(`${api.url}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
  });

  test("an asset path naming one of an object's own properties is a 404 envelope, not a broken response", async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      const res = await fetch(`${api.url}/api/v1/reference/assets/${name}`);
      expect(res.status).toBe(404);
      expectEnvelope(await jsonOf(res), 'NOT_FOUND');
    }
  });
});

test('a handler answers another declared 2xx with OtherSuccess; a status its route does not declare is a 500', async () => {
  const answer = async (status: number) => {
    const res = await fetch(`${api.url}/api/v1/answer/${status}`);
    return { status: res.status, body: await jsonOf(res) };
  };
  expect(await answer(200)).toEqual({ status: 200, body: { first: true } });
  expect(await answer(202)).toEqual({ status: 202, body: { other: true } });
  const undeclared = await answer(203);
  expect(undeclared.status).toBe(500);
  expectEnvelope(undeclared.body, 'INTERNAL');
});

test('a response that drifts from its declared schema fails the suite that provoked it', async () => {
  const drifting = defineRoute({
    method: 'GET',
    path: '/drift',
    tag: 'Test',
    access: 'public',
    summary: 'answers a field its schema does not declare',
    responses: {
      200: {
        description: 'a count',
        schema: {
          type: 'object',
          required: ['count'],
          additionalProperties: false,
          properties: { count: { type: 'integer' } },
        },
      },
    },
    // Cast: the handler's type would catch this drift at compile time; a store's row can still drift at run time.
    handler: () => ({ count: 1, extra: 'undeclared' }) as unknown as { count: number },
  });
  const driftApi = await startApi({ routes: [drifting] });
  expect((await fetch(`${driftApi.url}/api/v1/drift`)).status).toBe(200);
  await expect(driftApi.close()).rejects.toThrow(/GET \/api\/v1\/drift → 200: .*must NOT have additional properties/);
});
