import { recentActivity } from '../../core/audit/store';
import { defineRoute } from '../http/route';
import { activityListSchema, activityQuery } from './schemas';

const ACTIVITY_LIMIT_MAX = 100;

export const auditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/activity',
    tag: 'Admin',
    access: 'admin:read',
    summary: "The tenant's audit entries, newest first (role changes, API-key actions, team changes, …)",
    query: activityQuery,
    responses: { 200: { description: '`{items}`', schema: activityListSchema } },
    handler: async ({ db, query }) => ({ items: await recentActivity(db, Math.min(query.limit, ACTIVITY_LIMIT_MAX)) }),
  }),
];
