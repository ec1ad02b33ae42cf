import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import { defineRoute, type RouteDefinition } from '../http/route';
import { API_PREFIX } from '../http/router';
import { buildOpenApiDocument } from './document';

const ASSET_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS_PATH = `${API_PREFIX}/reference/assets/`;
/** A Map, not an object: a path ending in `constructor` or `__proto__` must find nothing. */
const ASSET_TYPES = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Shipyard API reference</title>
  <link rel="icon" href="${ASSETS_PATH}favicon-32x32.png">
  <link rel="stylesheet" href="${ASSETS_PATH}swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="${ASSETS_PATH}swagger-ui-bundle.js"></script>
  <script>SwaggerUIBundle({ url: '${API_PREFIX}/openapi.json', dom_id: '#reference', deepLinking: true });</script>
</body>
</html>`;

const referencePageRoute = defineRoute({
  method: 'GET',
  path: '/reference',
  tag: 'Reference',
  access: 'public',
  summary: 'A readable API reference page (HTML) rendered from the OpenAPI document',
  responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  handler: ({ ctx }) => {
    ctx.type = 'html';
    return REFERENCE_PAGE;
  },
});

/**
 * Adds the OpenAPI document and the reference page to a route list. The document covers every
 * route, these two included, and is built once.
 */
export function withApiReference(routes: RouteDefinition[]): RouteDefinition[] {
  const all: RouteDefinition[] = [
    ...routes,
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      tag: 'Reference',
      access: 'public',
      summary: 'This API as an OpenAPI 3.1 document',
      responses: {
        200: {
          description: 'The OpenAPI document',
          schema: {
            type: 'object',
            required: ['openapi', 'info', 'paths'],
            properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
          },
        },
      },
      // Read at request time, after the document below exists.
      handler: () => document,
    }),
    referencePageRoute,
  ];
  const document = buildOpenApiDocument(all);
  return all;
}

/**
 * Serves the reference page's assets from the swagger-ui-dist npm package (no CDN). Every other
 * request passes straight on.
 */
export function referenceAssets(): Middleware {
  return (ctx, next) => {
    const name = ctx.path.startsWith(ASSETS_PATH) ? ctx.path.slice(ASSETS_PATH.length) : '';
    const type = ASSET_TYPES.get(name);
    if (ctx.method !== 'GET' || !type) return next();
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(path.join(ASSET_DIR, name));
    return undefined; // answered here: nothing after it runs
  };
}
