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
