import type { Knex } from 'knex';
import type { WorkerPool } from '../workflows/taskQueues';
import { createProbeActivities } from './probe';

/** What an activity may use: created once per worker process. */
export interface ActivityDeps {
  db: Knex;
}

/** The activities each pool registers. Every pool answers the probe; domain work comes per pool. */
export function activitiesFor(_pool: WorkerPool, deps: ActivityDeps): Record<string, (...args: never[]) => unknown> {
  return { ...createProbeActivities(deps.db) };
}
