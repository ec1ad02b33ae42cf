import type { Knex } from 'knex';
import type { Config } from '../api/config';
import type { WorkerPool } from '../workflows/taskQueues';
import { createForgeActivities } from './forge';
import { createProbeActivities } from './probe';

/** What an activity may use: created once per worker process. */
export interface ActivityDeps {
  db: Knex;
  config: Config;
}

const POOL_ACTIVITIES: Record<WorkerPool, (deps: ActivityDeps) => object> = {
  forge: (deps) => createForgeActivities(deps),
  search: () => ({}),
  platform: () => ({}),
};

/** The activities each pool registers: every pool answers the probe, plus its own domain's. */
export function activitiesFor(pool: WorkerPool, deps: ActivityDeps): object {
  return { ...createProbeActivities(deps.db), ...POOL_ACTIVITIES[pool](deps) };
}
