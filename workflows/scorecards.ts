import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ScorecardActivities } from '../activities/scorecards';
import type {
  RescoreAllTenantsWorkflow,
  ScorecardsQueuedSignal,
  ScoreTenantInput,
  ScoreTenantWorkflow,
} from '../core/scorecards/scorecardWorkflows';

const { scoreQueued, scoreRange, queueRescoreOfEveryTenant } = proxyActivities<ScorecardActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10 },
});

export const scorecardsQueuedSignal = defineSignal('scorecards-queued' satisfies ScorecardsQueuedSignal);

/** Rounds per run before it continues as new, keeping its history short. */
const ROUNDS_PER_RUN = 100;

/**
 * One tenant's scoring (one run per tenant: a fixed workflow id, woken by signalWithStart). Each
 * round scores one batch of queued entities, then, while a full pass is under way, one batch of
 * it: a single change waits for one batch at most, even during a full pass over 100k entities.
 * A full request during a pass restarts it (the rules changed under it); two never run at once.
 * Tenants are fair to each other: each has at most one batch in flight on the platform queue.
 * The history holds the tenant id, counts and the last entity id of the pass, nothing else.
 */
export async function scoreTenant(input: ScoreTenantInput): Promise<void> {
  let queued = true;
  setHandler(scorecardsQueuedSignal, () => {
    queued = true;
  });
  let fullAfter = input.full_after;
  const { tenant_id, batch_size: limit } = input;
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    if (!queued && fullAfter === undefined && !(await condition(() => queued, input.idle_ms))) return;
    if (queued) {
      queued = false;
      const batch = await scoreQueued({ tenant_id, limit });
      if (batch.full) fullAfter = null;
      if (batch.more) queued = true;
    }
    if (fullAfter !== undefined) {
      const page = await scoreRange({ tenant_id, after_id: fullAfter, limit });
      fullAfter = page.last_id ?? undefined;
    }
  }
  await continueAsNew<ScoreTenantWorkflow>({ ...input, full_after: fullAfter });
}

scoreTenant satisfies ScoreTenantWorkflow;

/** The nightly run: queues a full re-score of every tenant; each tenant's own workflow does it. */
export async function rescoreAllTenants(): Promise<{ tenants: number }> {
  return { tenants: await queueRescoreOfEveryTenant() };
}

rescoreAllTenants satisfies RescoreAllTenantsWorkflow;
