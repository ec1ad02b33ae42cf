import { expandScopes } from '../../core/auth/permissions';

// The scope hierarchy: per resource admin ⊃ write ⊃ read; k8s-agents:write covers the finer
// create/update/delete scopes.

const sorted = (scopes: Iterable<string>) => [...scopes].sort();

test.each(['catalog', 'forge', 'repositories', 'operations'])(
  '%s:admin implies %s:write and %s:read, and nothing of other resources',
  (resource) => {
    expect(sorted(expandScopes([`${resource}:admin`]))).toEqual(
      sorted([`${resource}:admin`, `${resource}:write`, `${resource}:read`]),
    );
    expect(sorted(expandScopes([`${resource}:write`]))).toEqual(sorted([`${resource}:write`, `${resource}:read`]));
  },
);

test('admin:write implies admin:read', () => {
  expect(sorted(expandScopes(['admin:write']))).toEqual(['admin:read', 'admin:write']);
});

test('k8s-agents:write covers create, update, delete and read', () => {
  expect(sorted(expandScopes(['k8s-agents:write']))).toEqual(
    sorted(['k8s-agents:write', 'k8s-agents:create', 'k8s-agents:update', 'k8s-agents:delete', 'k8s-agents:read']),
  );
});

test('k8s-agents:admin covers every k8s-agents scope', () => {
  expect(sorted(expandScopes(['k8s-agents:admin']))).toEqual(
    sorted([
      'k8s-agents:admin',
      'k8s-agents:write',
      'k8s-agents:create',
      'k8s-agents:update',
      'k8s-agents:delete',
      'k8s-agents:read',
    ]),
  );
});

test('a finer k8s-agents scope implies read only', () => {
  expect(sorted(expandScopes(['k8s-agents:create']))).toEqual(['k8s-agents:create', 'k8s-agents:read']);
});

test.each(['catalog:read', 'forge:read', 'k8s-agents:read', 'admin:read', 'internal:service'])(
  '%s implies nothing more',
  (scope) => {
    expect(sorted(expandScopes([scope]))).toEqual([scope]);
  },
);

test('unknown scopes are dropped, and grant nothing', () => {
  expect(sorted(expandScopes(['catalog:superuser', 'forge', '*', 'FORGE:ADMIN', 'forge:read']))).toEqual([
    'forge:read',
  ]);
  expect(expandScopes([]).size).toBe(0);
});
