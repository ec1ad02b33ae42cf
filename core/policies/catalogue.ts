import Ajv, { type ValidateFunction } from 'ajv';

// The platform policies: a fixed catalogue in code (policies are pre-seeded, never created by a
// tenant); each tenant stores only its own `enabled` and `config` (tenant_policies), and reads
// the defaults below until its admin changes one. docs/administration.md describes each.

export const POLICY_IDS = ['api_key_max_lifetime', 'entity_requires_owner', 'production_molds_need_approval'] as const;
export type PolicyId = (typeof POLICY_IDS)[number];

export interface PolicyDefinition {
  id: PolicyId;
  name: string;
  description: string;
  /** Where the policy is checked, for the admin reading it. */
  enforced_at: string;
  default_enabled: boolean;
  /** The config's JSON Schema; its `default`s fill a config that leaves a field out. */
  config_schema: Record<string, unknown>;
}

const noConfig = { type: 'object', properties: {}, additionalProperties: false } as const;

export const POLICIES: readonly PolicyDefinition[] = [
  {
    id: 'api_key_max_lifetime',
    name: 'Longest API key lifetime',
    description: 'Every new API key must have an expires_at, at most max_days from its creation.',
    enforced_at: 'POST /admin/api-keys',
    default_enabled: false,
    config_schema: {
      type: 'object',
      properties: { max_days: { type: 'integer', minimum: 1, maximum: 3650, default: 90 } },
      additionalProperties: false,
    },
  },
  {
    id: 'entity_requires_owner',
    name: 'Entities must have an owner',
    description:
      'An entity created or updated through the API must have a non-empty owner once written. Entities written by manifests, cluster agents and the crawler are exempt.',
    enforced_at: 'POST /entities, PATCH /entities/{id}',
    default_enabled: false,
    config_schema: noConfig,
  },
  {
    id: 'production_molds_need_approval',
    name: 'Molds that touch production entities need an approval step',
    description:
      "A run whose parameters or action configs name (by service_id) an entity with lifecycle production is refused unless an approval gates the run's first step: the mold requires approval, its first action does, or its first action is an approval.",
    enforced_at: 'POST /forge/runs',
    default_enabled: false,
    config_schema: noConfig,
  },
];

const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const validators = new Map<PolicyId, ValidateFunction>(
  POLICIES.map((policy) => [policy.id, ajv.compile(policy.config_schema)]),
);

export const findPolicy = (id: string): PolicyDefinition | undefined => POLICIES.find((policy) => policy.id === id);

/** The config with its schema's defaults filled in, and the schema's complaints (empty when valid). */
export function checkPolicyConfig(
  id: PolicyId,
  config: Record<string, unknown>,
): { config: Record<string, unknown>; problems: { field: string; message: string }[] } {
  const filled = structuredClone(config);
  const validate = validators.get(id) as ValidateFunction;
  if (validate(filled)) return { config: filled, problems: [] };
  const problems = (validate.errors ?? []).map((e) => {
    const extra = (e.params as { additionalProperty?: string }).additionalProperty;
    const path = ['config', ...e.instancePath.split('/').filter(Boolean), ...(extra ? [extra] : [])].join('.');
    return { field: path, message: extra ? 'is not an allowed field' : (e.message ?? 'is invalid') };
  });
  return { config: filled, problems };
}

/** The defaults of a policy's config (its schema's `default`s). */
export const defaultPolicyConfig = (id: PolicyId): Record<string, unknown> => checkPolicyConfig(id, {}).config;
