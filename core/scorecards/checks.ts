import Ajv from 'ajv';
import type { FromSchema } from 'json-schema-to-ts';
import { invalid } from '../errors';
import { LIFECYCLES } from '../catalog/types';
import { FINDING_SEVERITIES, type FindingSeverity } from './types';

// The check language: a rule's check is data, one of a closed set of kinds, each with its own
// fields, validated by its JSON Schema before it is stored. A tenant never uploads code.

const kind = <K extends string>(name: K) => ({ type: 'string', const: name }) as const;
const noFields = <K extends string>(name: K, description: string) =>
  ({
    type: 'object',
    description,
    required: ['kind'],
    properties: { kind: kind(name) },
    additionalProperties: false,
  }) as const;

export const CHECK_KINDS = [
  'field_set',
  'tag_present',
  'min_links',
  'has_docs',
  'no_deprecated_dependencies',
  'lifecycle_in',
  'workload_seen_within',
  'no_open_finding_above',
  'bus_factor',
] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

export const CHECK_FIELDS = ['owner', 'description', 'tier'] as const;

const variants = {
  field_set: {
    type: 'object',
    description: 'The entity has a non-empty `field`',
    required: ['kind', 'field'],
    properties: { kind: kind('field_set'), field: { type: 'string', enum: CHECK_FIELDS } },
    additionalProperties: false,
  },
  tag_present: {
    type: 'object',
    description: 'The entity carries `tag`',
    required: ['kind', 'tag'],
    properties: { kind: kind('tag_present'), tag: { type: 'string', minLength: 1, maxLength: 100 } },
    additionalProperties: false,
  },
  min_links: {
    type: 'object',
    description: 'The entity has at least `count` links',
    required: ['kind', 'count'],
    properties: { kind: kind('min_links'), count: { type: 'integer', minimum: 1, maximum: 1000 } },
    additionalProperties: false,
  },
  has_docs: noFields('has_docs', 'The entity has a README, or a linked repository with crawled docs'),
  no_deprecated_dependencies: noFields(
    'no_deprecated_dependencies',
    'No entity this one `depends_on` has the lifecycle `deprecated`',
  ),
  lifecycle_in: {
    type: 'object',
    description: "The entity's lifecycle is one of `values`",
    required: ['kind', 'values'],
    properties: {
      kind: kind('lifecycle_in'),
      values: { type: 'array', items: { type: 'string', enum: LIFECYCLES }, minItems: 1, uniqueItems: true },
    },
    additionalProperties: false,
  },
  workload_seen_within: {
    type: 'object',
    description: "An agent reported one of the entity's workloads within the last `days` days",
    required: ['kind', 'days'],
    properties: { kind: kind('workload_seen_within'), days: { type: 'integer', minimum: 1, maximum: 3650 } },
    additionalProperties: false,
  },
  no_open_finding_above: {
    type: 'object',
    description: 'The entity has no open (or acknowledged) security finding more severe than `severity`',
    required: ['kind', 'severity'],
    properties: { kind: kind('no_open_finding_above'), severity: { type: 'string', enum: FINDING_SEVERITIES } },
    additionalProperties: false,
  },
  bus_factor: {
    type: 'object',
    description:
      "The entity's bus factor (over the default 90-day window, kept since the last crawl of its repositories) is at least `min` and at most `max` (one or both); an entity without one fails",
    required: ['kind'],
    minProperties: 2,
    properties: {
      kind: kind('bus_factor'),
      min: { type: 'integer', minimum: 1, maximum: 1000 },
      max: { type: 'integer', minimum: 1, maximum: 1000 },
    },
    additionalProperties: false,
  },
} as const;

/**
 * The JSON Schema of a check. `kind` picks the variant by if/then, so a bad check is answered
 * with the errors of its own kind only (a oneOf would list every variant's complaints).
 */
export const checkSchema = {
  type: 'object',
  description: 'A declarative check over what the catalog knows about an entity; `kind` picks the fields',
  required: ['kind'],
  properties: { kind: { type: 'string', enum: CHECK_KINDS } },
  allOf: CHECK_KINDS.map((name) => ({
    if: { properties: { kind: { const: name } }, required: ['kind'] },
    then: variants[name],
  })),
} as const;

/** The same language as a plain union: how stored checks are described in responses. */
export const checkVariantsSchema = {
  oneOf: [
    variants.field_set,
    variants.tag_present,
    variants.min_links,
    variants.has_docs,
    variants.no_deprecated_dependencies,
    variants.lifecycle_in,
    variants.workload_seen_within,
    variants.no_open_finding_above,
    variants.bus_factor,
  ],
} as const;
export type Check = FromSchema<typeof checkVariantsSchema>;

const isCheck = new Ajv({ strict: false }).compile<Check>(checkVariantsSchema);

/**
 * A check as its type: the API's schema has already refused a bad one with that kind's errors
 * (if/then carries no type), so this only narrows; anything else is still a 400.
 */
export function toCheck(value: unknown): Check {
  if (!isCheck(value)) throw invalid('Invalid check', [{ field: 'check', message: 'is not a check of a known kind' }]);
  return value;
}

/** What the checks read about one entity, gathered for a batch by one query (scoreStore). */
export interface EntityFacts {
  owner: string | null;
  description: string | null;
  tier: string | null;
  lifecycle: string | null;
  tags: string[];
  linkCount: number;
  hasReadme: boolean;
  hasCrawledDocs: boolean;
  /** Service ids of the deprecated entities this one depends on. */
  deprecatedDependencies: string[];
  lastWorkloadSeenAt: Date | null;
  /** The most severe open or acknowledged finding, or null. */
  worstOpenFinding: FindingSeverity | null;
  /** The kept bus factor (entity_bus_factors); null without one (no commits, never computed). */
  busFactor: number | null;
}

export interface CheckResult {
  passed: boolean;
  reason: string;
}

const DAY_MS = 86_400_000;
const pass = (reason: string): CheckResult => ({ passed: true, reason });
const fail = (reason: string): CheckResult => ({ passed: false, reason });
const severityRank = (severity: FindingSeverity) => FINDING_SEVERITIES.length - FINDING_SEVERITIES.indexOf(severity);

/** One check against one entity's facts at `now`: pure, so every kind is unit-tested. */
export function evaluateCheck(check: Check, facts: EntityFacts, now: Date): CheckResult {
  switch (check.kind) {
    case 'field_set': {
      const value = facts[check.field];
      return value !== null && value.trim() !== '' ? pass(`${check.field} is set`) : fail(`${check.field} is not set`);
    }
    case 'tag_present':
      return facts.tags.includes(check.tag) ? pass(`has tag ${check.tag}`) : fail(`tag ${check.tag} is missing`);
    case 'min_links':
      return facts.linkCount >= check.count
        ? pass(`${facts.linkCount} links (at least ${check.count})`)
        : fail(`${facts.linkCount} links, fewer than ${check.count}`);
    case 'has_docs':
      if (facts.hasReadme) return pass('has a README');
      return facts.hasCrawledDocs ? pass('a linked repository has docs') : fail('no README and no docs');
    case 'no_deprecated_dependencies':
      return facts.deprecatedDependencies.length === 0
        ? pass('no deprecated dependencies')
        : fail(`depends on deprecated ${facts.deprecatedDependencies.slice(0, 5).join(', ')}`);
    case 'lifecycle_in':
      return facts.lifecycle !== null && (check.values as readonly string[]).includes(facts.lifecycle)
        ? pass(`lifecycle is ${facts.lifecycle}`)
        : fail(`lifecycle ${facts.lifecycle ?? 'is not set'}, expected one of ${check.values.join(', ')}`);
    case 'workload_seen_within': {
      if (!facts.lastWorkloadSeenAt) return fail('no workload reported by an agent');
      const days = Math.floor((now.getTime() - facts.lastWorkloadSeenAt.getTime()) / DAY_MS);
      return days < check.days
        ? pass(`workload seen ${days} days ago`)
        : fail(`workload last seen ${days} days ago, not within ${check.days}`);
    }
    case 'no_open_finding_above':
      return facts.worstOpenFinding !== null && severityRank(facts.worstOpenFinding) > severityRank(check.severity)
        ? fail(`open ${facts.worstOpenFinding} finding, above ${check.severity}`)
        : pass(`no open finding above ${check.severity}`);
    case 'bus_factor': {
      if (facts.busFactor === null) return fail('no bus factor: no commits in the window');
      if (check.min !== undefined && facts.busFactor < check.min)
        return fail(`bus factor ${facts.busFactor}, below ${check.min}`);
      if (check.max !== undefined && facts.busFactor > check.max)
        return fail(`bus factor ${facts.busFactor}, above ${check.max}`);
      return pass(`bus factor ${facts.busFactor}`);
    }
  }
}
