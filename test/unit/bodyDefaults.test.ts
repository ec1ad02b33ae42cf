import type { Schema } from '../../api/http/route';
import { compileBody } from '../../api/http/validation';
import { apiRoutes } from '../../api/routes';

test('a body schema default is filled in by validation, at any depth, and a sent value is kept', () => {
  const validate = compileBody({
    type: 'object',
    properties: {
      role: { type: 'string', default: 'member' },
      notify: { type: 'boolean', default: true },
      steps: {
        type: 'array',
        items: { type: 'object', properties: { attempts: { type: 'integer', default: 3 } } },
      },
    },
  });
  expect(validate({ notify: false, steps: [{}, { attempts: 5 }] })).toEqual({
    role: 'member',
    notify: false,
    steps: [{ attempts: 3 }, { attempts: 5 }],
  });
});

// Defaults are applied to what the client sent: on an update, a default on a field the client
// left out would silently overwrite the stored value.
test('no update (PUT or PATCH) body declares a default on its own fields', () => {
  const topLevelDefaults = (schema: Schema) =>
    Object.entries((schema as { properties?: Record<string, { default?: unknown }> }).properties ?? {})
      .filter(([, property]) => property.default !== undefined)
      .map(([name]) => name);
  const offenders = apiRoutes
    .filter((route) => (route.method === 'PUT' || route.method === 'PATCH') && route.body)
    .flatMap((route) => topLevelDefaults(route.body!).map((field) => `${route.method} ${route.path}: ${field}`));
  expect(offenders).toEqual([]);
});
