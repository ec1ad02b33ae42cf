import { proxyActivities } from '@temporalio/workflow';

// The floor for `npm run bench:forge`: the forge run's actions and nothing else, no database
// bookkeeping. Bundled on its own by the bench, so it stays out of workers' bundles.

export interface FloorActivities {
  /** The same HTTP GET a forge api-call action makes, through httpAction. */
  httpGet(url: string): Promise<unknown>;
}

// The options forge's actionRunner gives an api-call action with default config.
const { httpGet } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '35 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second', backoffCoefficient: 2 },
});

/** One activity per URL, in order, as a forge run does its actions. */
export async function benchFloor(urls: string[]): Promise<void> {
  for (const url of urls) await httpGet(url);
}
