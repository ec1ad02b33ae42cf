import { README_FORMATS, RELATION_TYPES, SERVICE_ID_PATTERN } from './types';

// An entity's fields as JSON Schema fragments: one set of limits for the API's bodies
// (api/catalog/schemas.ts) and the manifest format (core/manifests/manifestRules.ts).

export const ENTITY_NAME_SCHEMA = { type: 'string', minLength: 1, maxLength: 200 } as const;
export const ENTITY_DESCRIPTION_SCHEMA = { type: ['string', 'null'], maxLength: 4000 } as const;
export const ENTITY_OWNER_SCHEMA = {
  type: ['string', 'null'],
  minLength: 1,
  maxLength: 320,
  description: 'A team slug or a user email',
} as const;
export const ENTITY_TAG_SCHEMA = { type: 'string', minLength: 1, maxLength: 100 } as const;
export const ENTITY_TAGS_SCHEMA = {
  type: 'array',
  items: ENTITY_TAG_SCHEMA,
  maxItems: 100,
  uniqueItems: true,
} as const;
export const SERVICE_ID_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: SERVICE_ID_PATTERN,
  description: 'Unique in the tenant; never a uuid',
} as const;

export const ENTITY_LINK_SCHEMA = {
  type: 'object',
  required: ['title', 'url'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    url: { type: 'string', format: 'uri', maxLength: 2000 },
    icon: { type: 'string', maxLength: 100 },
  },
  additionalProperties: false,
} as const;
export const ENTITY_LINKS_SCHEMA = { type: 'array', items: ENTITY_LINK_SCHEMA, maxItems: 50 } as const;

export const RELATION_INPUT_SCHEMA = {
  type: 'object',
  required: ['type', 'target'],
  properties: {
    type: { type: 'string', enum: RELATION_TYPES },
    target: { type: 'string', minLength: 1, maxLength: 63, description: "The target's service_id or id" },
  },
  additionalProperties: false,
} as const;
export const MAX_RELATIONS = 200;

export const README_MAX_LENGTH = 200_000;
export const README_SCHEMA = {
  type: 'object',
  required: ['content', 'format'],
  properties: {
    content: { type: 'string', maxLength: README_MAX_LENGTH },
    format: { type: 'string', enum: README_FORMATS },
  },
  additionalProperties: false,
} as const;
