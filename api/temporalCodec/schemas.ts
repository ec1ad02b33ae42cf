import type { FromSchema } from 'json-schema-to-ts';

// Temporal's remote codec protocol: Payloads as protobuf JSON, bytes in base64 (standard or
// URL-safe alphabet, as protobuf JSON parsers accept both).

const BASE64 = { type: 'string', pattern: '^[A-Za-z0-9+/_-]*={0,2}$', description: 'base64' } as const;

export const payloadSchema = {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      additionalProperties: BASE64,
      maxProperties: 64,
      description: 'e.g. `encoding`, `encryption-key-id`',
    },
    data: BASE64,
  },
  additionalProperties: false,
} as const;

export const payloadsSchema = {
  type: 'object',
  required: ['payloads'],
  properties: { payloads: { type: 'array', maxItems: 10_000, items: payloadSchema } },
  additionalProperties: false,
} as const;

/**
 * What the Temporal UI adds to every call (from UI 2.5x): whether to leave external storage
 * references as they are. Our payloads are never stored externally, so it changes nothing.
 */
export const codecQuerySchema = {
  type: 'object',
  properties: {
    preserveStorageRefs: {
      type: 'boolean',
      description: 'Sent by the Temporal UI; no payload here is a storage reference',
    },
  },
  additionalProperties: false,
} as const;

/** What the endpoint answers: every payload with both fields, as it serializes them. */
export const convertedPayloadsSchema = {
  type: 'object',
  required: ['payloads'],
  properties: {
    payloads: {
      type: 'array',
      items: { ...payloadSchema, required: ['metadata', 'data'] },
    },
  },
  additionalProperties: false,
} as const;

export type JsonPayload = FromSchema<typeof payloadSchema>;
