// The spec's API-key scopes are also the permission vocabulary for users: roles grant scopes,
// routes require one. Pure logic, no I/O.

export const SCOPES = [
  'catalog:read',
  'catalog:write',
  'catalog:admin',
  'forge:read',
  'forge:write',
  'forge:admin',
  'repositories:read',
  'repositories:write',
  'repositories:admin',
  'k8s-agents:read',
  'k8s-agents:create',
  'k8s-agents:update',
  'k8s-agents:delete',
  'k8s-agents:write',
  'k8s-agents:admin',
  'operations:read',
  'operations:write',
  'operations:admin',
  'admin:read',
  'admin:write',
  'internal:service',
] as const;

export type Scope = (typeof SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);
export const isScope = (value: string): value is Scope => SCOPE_SET.has(value);

// Per resource, admin includes write and write includes read. k8s-agents:write also covers
// the finer create/update/delete scopes ("Create, update, delete agents").
const DIRECTLY_IMPLIED: Partial<Record<Scope, Scope[]>> = {
  'catalog:admin': ['catalog:write'],
  'catalog:write': ['catalog:read'],
  'forge:admin': ['forge:write'],
  'forge:write': ['forge:read'],
  'repositories:admin': ['repositories:write'],
  'repositories:write': ['repositories:read'],
  'k8s-agents:admin': ['k8s-agents:write'],
  'k8s-agents:write': ['k8s-agents:create', 'k8s-agents:update', 'k8s-agents:delete', 'k8s-agents:read'],
  'k8s-agents:create': ['k8s-agents:read'],
  'k8s-agents:update': ['k8s-agents:read'],
  'k8s-agents:delete': ['k8s-agents:read'],
  'operations:admin': ['operations:write'],
  'operations:write': ['operations:read'],
  'admin:write': ['admin:read'],
};

/** Every scope the given ones grant, hierarchy included. */
export function expandScopes(granted: Iterable<string>): Set<Scope> {
  const result = new Set<Scope>();
  const pending = [...granted].filter(isScope);
  while (pending.length) {
    const scope = pending.pop() as Scope;
    if (result.has(scope)) continue;
    result.add(scope);
    pending.push(...(DIRECTLY_IMPLIED[scope] ?? []));
  }
  return result;
}

export const BUILT_IN_ROLES = {
  admin: {
    description: 'Everything, including tenant administration, users, roles and API keys',
    permissions: [
      'catalog:admin',
      'forge:admin',
      'repositories:admin',
      'k8s-agents:admin',
      'operations:admin',
      'admin:write',
    ],
  },
  editor: {
    description: 'Create and change catalog, forge, repository and operations data; read agents',
    permissions: ['catalog:write', 'forge:write', 'repositories:write', 'k8s-agents:read', 'operations:write'],
  },
  viewer: {
    description: 'Read everything except tenant administration',
    permissions: ['catalog:read', 'forge:read', 'repositories:read', 'k8s-agents:read', 'operations:read'],
  },
} as const satisfies Record<string, { description: string; permissions: Scope[] }>;

export type BuiltInRole = keyof typeof BUILT_IN_ROLES;
export const isBuiltInRole = (key: string): key is BuiltInRole => Object.hasOwn(BUILT_IN_ROLES, key);
