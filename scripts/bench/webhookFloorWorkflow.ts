import { proxyActivities } from '@temporalio/workflow';

// The workflow floor for `npm run bench:webhooks`: one activity that makes the delivery's signed
// POST through the egress guard, and nothing else (no database, no dispatcher). Bundled on its
// own by the bench, so it stays out of workers' bundles.

export interface WebhookFloorActivities {
  postSigned(marker: string): Promise<void>;
}

const { postSigned } = proxyActivities<WebhookFloorActivities>({ startToCloseTimeout: '2 minutes' });

export async function benchWebhookFloor(marker: string): Promise<void> {
  await postSigned(marker);
}
