import { platformMetricsSeries } from '../../core/insights/platformMetricsCommands';
import { readRange, utcDay } from '../../core/insights/platformMetricsRules';
import { defineRoute } from '../http/route';
import { platformMetricsQuery, platformMetricsSchema } from './platformMetricsSchemas';

// Platform metrics are a tenant admin's view of their own tenant (admin:read): every figure is
// per tenant under row-level security. A platform operator reads the platform tenant's, like any
// admin; a view across tenants would be an operator route of its own (DESIGN.md).

export const platformMetricsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/insights/platform-metrics',
    tag: 'Insights',
    access: 'admin:read',
    summary:
      "The tenant's daily platform metrics (UTC days): active users, API calls by caller kind, forge runs by mold and outcome with durations, searches and zero-result searches, catalog completeness, agents connected. Closed days come from the nightly rollup; today is computed live",
    query: platformMetricsQuery,
    responses: {
      200: { description: '`{from, to, days}`', schema: platformMetricsSchema },
      400: {
        description:
          'A date is malformed, `from` is after `to`, `to` is after today, or the range covers more than SHIPYARD_PLATFORM_METRICS_MAX_RANGE_DAYS days (366)',
      },
    },
    handler: async ({ db, query, deps }) => {
      const today = utcDay(new Date());
      const range = readRange(query, today, deps.config.platformMetrics.maxRangeDays);
      return { ...range, days: await platformMetricsSeries(db, range, today) };
    },
  }),
];
