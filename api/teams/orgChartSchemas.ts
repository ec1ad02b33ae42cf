// The org chart and bulk parent change (api/teams/orgChartRoutes.ts).

const uuid = { type: 'string', format: 'uuid' } as const;

export const BULK_PARENT_MAX_CHANGES = 200;

export const orgChartSchema = {
  type: 'object',
  required: ['teams'],
  properties: {
    teams: {
      type: 'array',
      description:
        'Every team depth-first from each root (a team without a parent), each after its parent and before its next sibling, siblings by name',
      items: {
        type: 'object',
        required: ['id', 'name', 'slug', 'parent_id', 'depth', 'member_count', 'children'],
        properties: {
          id: uuid,
          name: { type: 'string' },
          slug: { type: 'string' },
          parent_id: { type: ['string', 'null'], format: 'uuid' },
          depth: { type: 'integer', minimum: 0, description: '0 for a root' },
          member_count: { type: 'integer', minimum: 0, description: 'Direct members of this team' },
          children: { type: 'array', items: uuid, description: 'The ids of its child teams, in order' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const bulkParentSchema = {
  type: 'object',
  required: ['changes'],
  properties: {
    changes: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_PARENT_MAX_CHANGES,
      items: {
        type: 'object',
        required: ['team_id', 'parent_id'],
        properties: {
          team_id: uuid,
          parent_id: { type: ['string', 'null'], format: 'uuid', description: 'null makes the team a root' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const bulkParentResultSchema = {
  type: 'object',
  required: ['updated'],
  properties: { updated: { type: 'integer', minimum: 0, description: 'Teams whose parent changed' } },
  additionalProperties: false,
} as const;
