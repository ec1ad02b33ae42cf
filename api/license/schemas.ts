import { EDITIONS } from '../../core/license/editions';
import { LICENSE_TYPES } from '../../core/license/keys';
import { USAGE_RESOURCES, WARNING_TYPES } from '../../core/license/rules';
import { COUNT as count } from '../http/countSchemas';

const nullableDate = { type: ['string', 'null'], format: 'date-time' } as const;
const resourceLimits = {
  type: 'object',
  required: ['clusters', 'nodes'],
  description: '0 means unlimited',
  properties: { clusters: count, nodes: count },
  additionalProperties: false,
} as const;

const resourceUsage = {
  type: 'array',
  items: {
    type: 'object',
    required: ['resource', 'used', 'limit', 'percent'],
    properties: {
      resource: { type: 'string', enum: USAGE_RESOURCES },
      used: count,
      limit: { ...count, description: '0 means unlimited' },
      percent: { ...count, description: 'Of the limit, rounded down; 0 when unlimited' },
    },
    additionalProperties: false,
  },
} as const;

export const licenseStatusSchema = {
  type: 'object',
  required: [
    'edition',
    'type',
    'clusters',
    'licensee',
    'issued_at',
    'expires_at',
    'activated_at',
    'key_prefix',
    'resource_limits',
    'resource_usage',
    'warnings',
    'is_expired',
    'is_valid',
    'has_license',
    'beta_ends_at',
    'beta_grace_ends_at',
    'is_read_only',
  ],
  properties: {
    edition: { type: 'string', enum: EDITIONS },
    type: { type: ['string', 'null'], enum: [...LICENSE_TYPES, null] },
    clusters: { ...count, description: "The license's own cluster count; 0 means the edition's" },
    licensee: { type: ['string', 'null'] },
    issued_at: nullableDate,
    expires_at: nullableDate,
    activated_at: nullableDate,
    key_prefix: { type: ['string', 'null'], description: 'SHP-BE, SHP-ST or SHP-AG' },
    resource_limits: resourceLimits,
    resource_usage: resourceUsage,
    warnings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'message', 'level'],
        properties: {
          type: { type: 'string', enum: WARNING_TYPES },
          message: { type: 'string' },
          level: { type: 'string', enum: ['warning', 'error'] },
        },
        additionalProperties: false,
      },
    },
    is_expired: { type: 'boolean' },
    is_valid: {
      type: 'boolean',
      description: 'False when the license expired or its stored key no longer verifies (then free limits apply)',
    },
    has_license: { type: 'boolean', description: 'A key is stored for the tenant' },
    beta_ends_at: nullableDate,
    beta_grace_ends_at: nullableDate,
    is_read_only: { type: 'boolean', description: 'Beta ended: writes answer 423 until a paid key is activated' },
  },
  additionalProperties: false,
} as const;

export const licenseUsageSchema = {
  type: 'object',
  required: ['resource_limits', 'resource_usage'],
  properties: { resource_limits: resourceLimits, resource_usage: resourceUsage },
  additionalProperties: false,
} as const;

export const activateLicenseSchema = {
  type: 'object',
  required: ['license_key'],
  properties: {
    license_key: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: 'SHP-<BE|ST|AG>-<base64url payload>.<base64url Ed25519 signature>',
    },
  },
  additionalProperties: false,
} as const;

export const pendingClustersSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['cluster_id', 'name', 'attempts', 'first_attempted_at', 'last_attempted_at'],
    properties: {
      cluster_id: { type: 'string' },
      name: { type: 'string' },
      environment: { type: ['string', 'null'] },
      region: { type: ['string', 'null'] },
      attempts: { type: 'integer', minimum: 1 },
      first_attempted_at: { type: 'string', format: 'date-time' },
      last_attempted_at: { type: 'string', format: 'date-time' },
    },
    additionalProperties: false,
  },
} as const;

export const approvedClusterSchema = {
  type: 'object',
  required: ['cluster_id', 'approved_clusters'],
  properties: {
    cluster_id: { type: 'string' },
    approved_clusters: { ...count, description: 'Clusters approved on top of the license, this one included' },
  },
  additionalProperties: false,
} as const;

export const clusterIdParams = {
  type: 'object',
  required: ['cluster_id'],
  properties: { cluster_id: { type: 'string', minLength: 1, maxLength: 253 } },
  additionalProperties: false,
} as const;
