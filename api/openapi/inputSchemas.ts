import type { Schema } from '../http/route';

/**
 * The request validator refuses the NUL character in every string and key of a request, path,
 * query and body alike (api/http/validation.ts: PostgreSQL stores no NUL). The document says so
 * on every input schema, so a client (or schemathesis) reading it knows the rule: this pattern on
 * each string, on each key an object leaves to the caller, and any free-form value is
 * `JsonWithoutNul`.
 */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

export const JSON_WITHOUT_NUL_NAME = 'JsonWithoutNul';
const JSON_WITHOUT_NUL_REF = { $ref: `#/components/schemas/${JSON_WITHOUT_NUL_NAME}` } as const;

/** Any JSON value in which no string or key holds NUL: each keyword applies to its own type. */
export const jsonWithoutNulSchema = {
  description: 'Any JSON value in which no string and no key holds the NUL character (\\u0000)',
  pattern: NO_NUL_PATTERN,
  propertyNames: { pattern: NO_NUL_PATTERN },
  additionalProperties: JSON_WITHOUT_NUL_REF,
  items: JSON_WITHOUT_NUL_REF,
} as const;

type Node = Record<string, unknown>;

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs'] as const;
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
// `not` is left alone: the rule inside a negation would say the opposite.
const SUBSCHEMAS = ['if', 'then', 'else', 'contains'] as const;
/** Keywords that fix a value outright, or check a string's shape with no NUL in it. */
const CLOSED_STRING_KEYWORDS = ['enum', 'const', 'format'] as const;
const COMBINATORS = ['allOf', 'anyOf', 'oneOf', 'if', '$ref'] as const;

const types = (node: Node): unknown[] =>
  node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];

/** A schema that says nothing about its value's type or shape: any JSON. */
const isFreeForm = (node: Node) =>
  node.type === undefined &&
  !['properties', 'items', ...CLOSED_STRING_KEYWORDS, ...COMBINATORS].some((keyword) => keyword in node);

/** `schema`, as a request input, stating that no string or key in it holds NUL. */
export function withoutNul(schema: Schema | boolean): Schema {
  if (schema === true) return JSON_WITHOUT_NUL_REF;
  if (schema === false) return schema as unknown as Schema;
  const node: Node = { ...(schema as Node) };
  if (isFreeForm(node)) return { ...node, ...JSON_WITHOUT_NUL_REF } as Schema;
  for (const keyword of SUBSCHEMA_MAPS) {
    const map = node[keyword] as Record<string, Schema> | undefined;
    if (map) node[keyword] = Object.fromEntries(Object.entries(map).map(([key, sub]) => [key, withoutNul(sub)]));
  }
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = node[keyword] as Schema[] | undefined;
    if (list) node[keyword] = list.map(withoutNul);
  }
  for (const keyword of SUBSCHEMAS) {
    if (node[keyword] !== undefined) node[keyword] = withoutNul(node[keyword] as Schema);
  }
  const typed = types(node);
  if (typed.includes('string') && !CLOSED_STRING_KEYWORDS.some((keyword) => keyword in node)) {
    // A pattern of the route's own may allow NUL (`\S`, `^/`): both must hold.
    if (node.pattern === undefined) node.pattern = NO_NUL_PATTERN;
    else node.allOf = [...((node.allOf as Schema[] | undefined) ?? []), { pattern: NO_NUL_PATTERN }];
  }
  if (typed.includes('object') && node.additionalProperties !== false) {
    const names = node.propertyNames as Schema | undefined;
    node.propertyNames = names ? { allOf: [names, { pattern: NO_NUL_PATTERN }] } : { pattern: NO_NUL_PATTERN };
    node.additionalProperties = withoutNul((node.additionalProperties as Schema | boolean | undefined) ?? true);
  }
  if (typed.includes('array')) node.items = withoutNul((node.items as Schema | boolean | undefined) ?? true);
  return node as Schema;
}
