import { BUS_FACTOR_WINDOWS, NO_BUS_FACTOR_REASONS } from '../../core/insights/busFactorRules';

export const BUS_FACTOR_LIST_MAX = 200;

export const busFactorQuery = {
  type: 'object',
  properties: {
    entity_id: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      description: "An entity's id or service_id: the bus factor of the repositories it links to",
    },
    repository_id: { type: 'string', format: 'uuid', description: "A repository's id" },
    window: {
      type: 'string',
      enum: BUS_FACTOR_WINDOWS,
      default: '90d',
      description: 'The days of commits counted, ending now (with an entity_id or repository_id)',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: BUS_FACTOR_LIST_MAX,
      default: 50,
      description: 'Without ids: entities per page',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000,
      default: 0,
      description: 'Without ids: entities skipped',
    },
  },
  additionalProperties: false,
} as const;

const contributorSchema = {
  type: 'object',
  required: ['name', 'email', 'lines', 'share'],
  properties: {
    name: { type: 'string' },
    email: { type: 'string' },
    lines: { type: 'integer', description: 'Lines added plus lines deleted in the window' },
    share: { type: 'number', description: 'lines over all lines changed in the window, 0 to 1' },
  },
  additionalProperties: false,
} as const;

const refSchema = {
  type: 'object',
  required: ['id', 'service_id', 'name'],
  properties: { id: { type: 'string', format: 'uuid' }, service_id: { type: 'string' }, name: { type: 'string' } },
  additionalProperties: false,
} as const;

export const busFactorReportSchema = {
  type: 'object',
  required: ['window', 'since', 'bus_factor', 'lines', 'contributors', 'repositories'],
  properties: {
    entity: refSchema,
    repository_id: { type: 'string', format: 'uuid' },
    window: { type: 'string', enum: BUS_FACTOR_WINDOWS },
    since: { type: 'string', format: 'date-time', description: 'The oldest commit time counted' },
    bus_factor: {
      type: ['integer', 'null'],
      description: 'The fewest contributors who together authored more than half of the lines changed',
    },
    reason: { type: 'string', enum: NO_BUS_FACTOR_REASONS, description: 'Why bus_factor is null' },
    lines: { type: 'integer', description: 'Lines changed (added plus deleted) in the window' },
    contributors: { type: 'array', items: contributorSchema, description: 'By share, largest first; equal by email' },
    repositories: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'full_name'],
        properties: { id: { type: 'string', format: 'uuid' }, full_name: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const busFactorListSchema = {
  type: 'object',
  required: ['entities', 'window', 'next_offset'],
  properties: {
    window: { type: 'string', enum: BUS_FACTOR_WINDOWS, description: 'The window of the kept figures' },
    entities: {
      type: 'array',
      items: {
        type: 'object',
        required: [...refSchema.required, 'bus_factor', 'computed_at'],
        properties: {
          ...refSchema.properties,
          bus_factor: { type: ['integer', 'null'] },
          computed_at: { type: 'string', format: 'date-time' },
        },
        additionalProperties: false,
      },
    },
    next_offset: { type: ['integer', 'null'], description: 'The offset of the next page; null on the last' },
  },
  additionalProperties: false,
} as const;

export const busFactorResponseSchema = { oneOf: [busFactorReportSchema, busFactorListSchema] } as const;
