/** One task queue per worker pool, so each pool scales and fails on its own. */
export const TASK_QUEUES = {
  forge: 'shipyard-forge',
  search: 'shipyard-search',
  platform: 'shipyard-platform',
} as const;

export type WorkerPool = keyof typeof TASK_QUEUES;

export const WORKER_POOLS = Object.keys(TASK_QUEUES) as WorkerPool[];
