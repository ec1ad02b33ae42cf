import type { ActivityDeps } from './deps';
import type { WorkerPool } from '../core/taskQueues';
import { createDatabaseBackupActivities } from './databaseBackup';
import { createForgeActivities } from './forge';
import { createIntegrationSyncActivities } from './integrationSync';
import { createLicenseActivities } from './license';
import { createNotificationActivities } from './notifications';
import { createPlatformMetricsActivities } from './platformMetrics';
import { createProbeActivities } from './probe';
import { createRetentionActivities } from './retention';
import { createScorecardActivities } from './scorecards';
import { createSearchActivities } from './search';
import { createWebhookActivities } from './webhooks';

export type { ActivityDeps };

const POOL_ACTIVITIES: Record<WorkerPool, (deps: ActivityDeps) => object> = {
  forge: (deps) => createForgeActivities(deps),
  search: (deps) => createSearchActivities(deps),
  platform: (deps) => ({
    ...createRetentionActivities(deps.db),
    ...createLicenseActivities(deps),
    ...createNotificationActivities(deps),
    ...createDatabaseBackupActivities(deps),
    ...createScorecardActivities(deps),
    ...createIntegrationSyncActivities(deps),
    ...createWebhookActivities(deps),
    ...createPlatformMetricsActivities(deps),
  }),
};

/** The activities each pool registers: every pool answers the probe, plus its own domain's. */
export function activitiesFor(pool: WorkerPool, deps: ActivityDeps): object {
  return { ...createProbeActivities(deps.db), ...POOL_ACTIVITIES[pool](deps) };
}
