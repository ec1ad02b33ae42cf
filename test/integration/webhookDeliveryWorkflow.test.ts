import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { WebhookActivities } from '../../activities/webhooks';
import type { AttemptOutcome, WebhookDeliveryInput } from '../../core/webhooks/types';
import type { webhookDelivery } from '../../workflows/webhookDelivery';
import { useStubWorker } from '../support/stubWorker';
import { WORKFLOW_BUNDLE_PATH } from '../support/testEnv';

// The delivery workflow on the real dev server with stub activities: each test scripts what the
// attempts answer; the calls are kept in memory. No database, no HTTP.

let script: AttemptOutcome[] = [];
const attempts: number[] = [];
const givenUp: string[] = [];

const stubs: WebhookActivities = {
  async attemptDelivery() {
    attempts.push(Date.now());
    return script.shift() ?? { outcome: 'delivered' };
  },
  async giveUpDelivery({ delivery_id }) {
    givenUp.push(delivery_id);
  },
};

const stub = useStubWorker('webhook-wf-test', stubs);

jest.setTimeout(30_000);

beforeEach(() => {
  script = [];
  attempts.length = 0;
  givenUp.length = 0;
});

const deliver = (retry: Partial<WebhookDeliveryInput['retry']> = {}) => {
  const input: WebhookDeliveryInput = {
    tenant_id: randomUUID(),
    delivery_id: randomUUID(),
    retry: { base_delay_ms: 50, max_delay_ms: 200, window_ms: 10_000, ...retry },
    attempt_timeout_ms: 1_000,
  };
  return stub.client.workflow.execute<typeof webhookDelivery>('webhookDelivery', {
    taskQueue: stub.taskQueue,
    workflowId: `webhook-delivery-test-${randomUUID()}`,
    args: [input],
  });
};

test('retries after each retryable answer until delivered', async () => {
  script = [{ outcome: 'retry' }, { outcome: 'retry' }, { outcome: 'retry' }];
  expect(await deliver()).toBe('delivered');
  expect(attempts).toHaveLength(4);
  expect(givenUp).toEqual([]);
});

test('a final answer ends the delivery failed at once', async () => {
  script = [{ outcome: 'final' }];
  expect(await deliver()).toBe('failed');
  expect(attempts).toHaveLength(1);
  expect(givenUp).toEqual([]);
});

test('once the next retry would start after the window, the delivery gives up, failed', async () => {
  script = Array.from({ length: 100 }, () => ({ outcome: 'retry' }) as const);
  expect(await deliver({ base_delay_ms: 200, max_delay_ms: 400, window_ms: 1_000 })).toBe('failed');
  expect(givenUp).toHaveLength(1);
  expect(attempts.length).toBeGreaterThan(1);
  expect(attempts.length).toBeLessThan(20);
});

test("a 429's Retry-After sets the wait before the next attempt", async () => {
  script = [{ outcome: 'retry', retry_after_ms: 1_500 }];
  expect(await deliver()).toBe('delivered');
  expect(attempts[1] - attempts[0]).toBeGreaterThanOrEqual(1_400);
});

// A delivery lives up to a day, across deployments: a change of its commands would stall the
// deliveries under way on a determinism error. Recorded from the first version (plain payloads):
// a retry, a retry after a Retry-After, then delivered.
test('a webhookDelivery run recorded from the first version replays without a determinism error', async () => {
  const fixture = 'webhookDelivery-v1.history.bin';
  await Worker.runReplayHistory(
    { workflowBundle: { code: await readFile(WORKFLOW_BUNDLE_PATH, 'utf8') } },
    temporal.api.history.v1.History.decode(await readFile(path.join(__dirname, '..', 'fixtures', fixture))),
    fixture,
  );
});
