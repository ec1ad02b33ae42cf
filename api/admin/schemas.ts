import { POLICY_IDS } from '../../core/policies/catalogue';
// Request and response schemas of the /admin settings, policies and feature-flag routes.

export const settingsSchema = {
  type: 'object',
  description: 'Free-form: any JSON object',
  additionalProperties: true,
} as const;

const freeObject = { type: 'object', additionalProperties: true } as const;

export const policySchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'description',
    'enforced_at',
    'default_enabled',
    'config_schema',
    'enabled',
    'config',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', enum: POLICY_IDS },
    name: { type: 'string' },
    description: { type: 'string' },
    enforced_at: { type: 'string', description: 'Where the policy is checked' },
    default_enabled: { type: 'boolean' },
    config_schema: { ...freeObject, description: 'The JSON Schema `config` is validated against' },
    enabled: { type: 'boolean' },
    config: freeObject,
    updated_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: "null while the catalogue's defaults apply",
    },
  },
  additionalProperties: false,
} as const;

export const policyListSchema = {
  type: 'object',
  required: ['policies'],
  properties: { policies: { type: 'array', items: policySchema } },
  additionalProperties: false,
} as const;

export const policyParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
  additionalProperties: false,
} as const;

export const updatePolicySchema = {
  type: 'object',
  minProperties: 1,
  description: 'What is left out stays as it is; `config` replaces the whole config',
  properties: { enabled: { type: 'boolean' }, config: freeObject },
  additionalProperties: false,
} as const;

const dateTime = { type: 'string', format: 'date-time' } as const;
const flagKey = { type: 'string', pattern: '^[a-z0-9][a-z0-9_.-]{0,99}$' } as const;
const flagName = { type: 'string', minLength: 1, maxLength: 200 } as const;
const flagDescription = { type: 'string', maxLength: 2000 } as const;

const flagOverrideSchema = {
  type: 'object',
  required: ['tenant_id', 'enabled', 'updated_at'],
  properties: { tenant_id: { type: 'string', format: 'uuid' }, enabled: { type: 'boolean' }, updated_at: dateTime },
  additionalProperties: false,
} as const;

const flagProperties = {
  key: flagKey,
  name: { type: 'string' },
  description: { type: 'string' },
  enabled: { type: 'boolean', description: 'The default, for every tenant without an override' },
  created_at: dateTime,
  updated_at: dateTime,
} as const;

export const featureFlagSchema = {
  type: 'object',
  required: ['key', 'name', 'description', 'enabled', 'created_at', 'updated_at'],
  properties: flagProperties,
  additionalProperties: false,
} as const;

export const featureFlagWithOverridesSchema = {
  type: 'object',
  required: [...featureFlagSchema.required, 'overrides'],
  properties: { ...flagProperties, overrides: { type: 'array', items: flagOverrideSchema } },
  additionalProperties: false,
} as const;

export const featureFlagListSchema = {
  type: 'object',
  required: ['features'],
  properties: { features: { type: 'array', items: featureFlagWithOverridesSchema } },
  additionalProperties: false,
} as const;

export const createFeatureFlagSchema = {
  type: 'object',
  required: ['key', 'name'],
  properties: {
    key: flagKey,
    name: flagName,
    description: { ...flagDescription, default: '' },
    enabled: { type: 'boolean', default: false },
  },
  additionalProperties: false,
} as const;

export const updateFeatureFlagSchema = {
  type: 'object',
  minProperties: 1,
  properties: { name: flagName, description: flagDescription, enabled: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export const flagKeyParams = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', maxLength: 100 } },
  additionalProperties: false,
} as const;

export const flagOverrideParams = {
  type: 'object',
  required: ['key', 'tenantId'],
  properties: { key: { type: 'string', maxLength: 100 }, tenantId: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
} as const;

export const setOverrideSchema = {
  type: 'object',
  properties: { enabled: { type: 'boolean', default: true, description: 'What the flag is for that tenant' } },
  additionalProperties: false,
} as const;

export const flagOverrideResultSchema = {
  type: 'object',
  required: ['key', ...flagOverrideSchema.required],
  properties: { key: flagKey, ...flagOverrideSchema.properties },
  additionalProperties: false,
} as const;

export const evaluatedFeaturesSchema = {
  type: 'object',
  required: ['features'],
  properties: {
    features: {
      type: 'object',
      description: "Every flag's key, and whether it is on for the caller's tenant",
      additionalProperties: { type: 'boolean' },
    },
  },
  additionalProperties: false,
} as const;
