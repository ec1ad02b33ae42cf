import { defineRoute } from '../http/route';
import { recentActivity } from '../../core/audit/store';

const ACTIVITY_LIMIT_MAX = 100;

export const auditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/activity',
    tag: 'Admin',
    access: 'admin:read',
    summary: "The tenant's audit entries, newest first (role changes, API-key actions, team changes, …)",
    query: {
      type: 'object',
      // Clamped rather than rejected, as the spec says.
      properties: { limit: { type: 'integer', minimum: 1, default: 50 } },
      additionalProperties: false,
    },
    responses: { 200: { description: '`{items}`' } },
    handler: async ({ db, query }) => ({ items: await recentActivity(db, Math.min(query.limit, ACTIVITY_LIMIT_MAX)) }),
  }),
];
