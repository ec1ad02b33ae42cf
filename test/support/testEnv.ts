import path from 'node:path';

/**
 * Where the fakes of third parties listen: a loopback address (all of 127/8 is loopback on
 * Linux) that the suite's egress allow-list names, while 127.0.0.1, where our own services
 * listen, stays refused as in production.
 */
export const FAKES_HOST = '127.0.0.77';

/**
 * Tests use their own database, Temporal namespace and index prefix, so a running
 * `npm start` stack and the suite never see each other's data or workflows.
 */
export const TEST_ENV = {
  SHIPYARD_PG_DATABASE: 'shipyard_test',
  TEMPORAL_NAMESPACE: 'shipyard-test',
  ES_INDEX_PREFIX: 'shipyard_test',
  LOG_LEVEL: 'silent',
  SHIPYARD_EGRESS_ALLOW: FAKES_HOST,
  // The integration sync schedule would sync every suite's integrations at each tick, changing
  // their status under the suites' feet: it never ticks in a run (its tests start the tick).
  SHIPYARD_INTEGRATION_SYNC_INTERVAL: '365d',
} as const;

export const WORKFLOW_BUNDLE_PATH = path.join(
  process.env.SHIPYARD_DATA ?? path.join(__dirname, '..', '..', '.data'),
  'test',
  'workflow-bundle.js',
);

export function applyTestEnv(): void {
  for (const [name, value] of Object.entries(TEST_ENV)) process.env[name] ??= value;
}
