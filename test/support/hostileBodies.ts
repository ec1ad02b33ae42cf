// Requests built to stall or crash the API (issue 45): each must be refused with a 4xx quickly
// while the event loop keeps answering others. Shared by the integration test
// (test/integration/hostileInput.test.ts), the fuzz and the fairness benchmark. Bodies are
// built by functions, never stored as megabytes of text.

export interface HostileRequest {
  name: string;
  method: 'POST' | 'PUT';
  /** Below /api/v1. */
  path: string;
  /** What the caller needs; these bodies need no more than the route's own scope. */
  scopes: string[];
  /** Send it as `bodyText(request)`: JSON.stringify cannot write the deepest of these bodies. */
  body: unknown;
  /** Acceptable answers (4xx). */
  expect: number[];
}

const MANIFEST_HEAD = 'apiVersion: shipyard.dev/v1\nkind: Entity\nmetadata:\n  name: hostile\n';
const MANIFEST_TAIL = 'spec:\n  type: service\n';

/** A manifest whose metadata holds `lines` (each indented under metadata). */
const manifestWith = (lines: string[]) =>
  `${MANIFEST_HEAD}${lines.map((line) => `  ${line}\n`).join('')}${MANIFEST_TAIL}`;

/** `a0: &a0 []`, then six levels of 14 aliases to the level below: 610 bytes that expand to 14^6 nodes. */
export function aliasBomb(levels = 6, width = 14): string {
  const lines = ['a0: &a0 []'];
  for (let level = 1; level <= levels; level++) {
    lines.push(
      `a${level}: &a${level} [${Array(width)
        .fill(`*a${level - 1}`)
        .join(', ')}]`,
    );
  }
  return manifestWith(lines);
}

/** An anchor whose own value refers to it. */
export const selfAlias = (): string => manifestWith(['tags: &a [*a]']);

/** One map of `keys` keys under metadata. */
export const wideMap = (keys: number): string => manifestWith(Array.from({ length: keys }, (_, i) => `k${i}: v`));

/** `count` tiny documents in one stream. */
export const tinyDocuments = (count: number): string =>
  Array.from({ length: count }, (_, i) => `a: ${i}`).join('\n---\n');

/** `levels` nested arrays around `leaf`, kept as their count: bodyText writes them out without recursion. */
export class NestedArrays {
  constructor(
    readonly levels: number,
    readonly leaf: unknown = 'bottom',
  ) {}
}

export const deepJson = (levels: number): NestedArrays => new NestedArrays(levels);

/** The JSON text of a request's body, nested arrays written out as brackets. */
export function bodyText(request: Pick<HostileRequest, 'body'>): string {
  const nested: NestedArrays[] = [];
  const text = JSON.stringify(request.body, (_, value: unknown) => {
    if (!(value instanceof NestedArrays)) return value;
    nested.push(value);
    return `\u0000nested ${nested.length - 1}`;
  });
  return text.replace(/"\\u0000nested (\d+)"/g, (_, i: string) => {
    const { levels, leaf } = nested[Number(i)];
    return `${'['.repeat(levels)}${JSON.stringify(leaf)}${']'.repeat(levels)}`;
  });
}

/** A mold whose multi-select parameter has `options` choices, its default naming every one (~550 KB at 32,000). */
export function hugeMultiSelectMold(options: number): Record<string, unknown> {
  const choices = Array.from({ length: options }, (_, i) => `o${i}`);
  return {
    slug: 'hostile-options',
    name: 'Hostile options',
    parameters: [{ name: 'pick', type: 'multi-select', options: choices, default: choices }],
    actions: [{ name: 'wait', type: 'approval' }],
  };
}

const manifestRequest = (name: string, path: string, content: string, scopes = ['catalog:read']): HostileRequest => ({
  name,
  method: 'POST',
  path,
  scopes,
  body: { content },
  expect: [400, 413],
});

const STREAM_ROUTES = [
  ['validate', 'catalog:read'],
  ['analyze', 'catalog:read'],
  ['convert', 'catalog:read'],
  ['import', 'catalog:write'],
] as const;

export const HOSTILE_REQUESTS: HostileRequest[] = [
  manifestRequest('YAML alias bomb (14^6 nodes from 610 bytes)', '/manifests/validate', aliasBomb()),
  manifestRequest('YAML self-referencing alias', '/manifests/validate', selfAlias()),
  manifestRequest('YAML map of 8,000 keys', '/manifests/validate', wideMap(8_000)),
  manifestRequest('YAML map of 40,000 keys', '/manifests/validate', wideMap(40_000)),
  ...STREAM_ROUTES.map(([route, scope]) =>
    manifestRequest(`2,000 tiny YAML documents to ${route}`, `/manifests/${route}`, tinyDocuments(2_000), [scope]),
  ),
  {
    name: 'mold of ~550 KB with a 32,000-option multi-select',
    method: 'POST',
    path: '/forge/molds',
    scopes: ['forge:write'],
    body: hugeMultiSelectMold(32_000),
    expect: [400],
  },
  {
    name: 'mold create nested 5,000 levels deep',
    method: 'POST',
    path: '/forge/molds',
    scopes: ['forge:write'],
    body: { slug: 'hostile-deep', name: 'Deep', parameters: [{ name: 'p', type: 'string', default: deepJson(5_000) }] },
    expect: [400],
  },
  {
    name: 'run create nested 5,000 levels deep',
    method: 'POST',
    path: '/forge/runs',
    scopes: ['forge:write'],
    body: { mold_slug: 'hostile', parameters: { p: deepJson(5_000) } },
    expect: [400],
  },
];
