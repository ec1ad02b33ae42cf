import {
  condition,
  continueAsNew,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ScorecardActivities } from '../activities/scorecards';
import type {
  InitiativeDeadlinesWorkflow,
  RescoreAllTenantsWorkflow,
  ScorecardsQueuedSignal,
  ScoreTenantInput,
  ScoreTenantWorkflow,
} from '../core/scorecards/scorecardWorkflows';

// The batches are local activities: short database work in the worker that runs the workflow,
// without a task-queue round trip each (which costs about as much as a batch's own work).
const { scoreQueued, scoreRange } = proxyLocalActivities<ScorecardActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

const {
  scoreQueued: scoreQueuedYielding,
  scoreRange: scoreRangeYielding,
  queueRescoreOfEveryTenant,
  listTenantsWithDueInitiatives,
  openInitiativeActions,
} = proxyActivities<ScorecardActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10 },
});

export const scorecardsQueuedSignal = defineSignal('scorecards-queued' satisfies ScorecardsQueuedSignal);

/** Rounds per run before it continues as new, keeping its history short. */
const ROUNDS_PER_RUN = 100;

/**
 * Local activities run back to back in one workflow task, which sees no signal until it ends
 * (at the latest when it heartbeats, ~8 s), and a worker told to stop waits for it. Every
 * YIELD_EVERY-th round's batches are regular activities, which end the task: a change made during
 * a pass is seen within a few batches, and a stopping worker finishes within a few, even while
 * writes keep the queue full; for one task-queue round trip per YIELD_EVERY batches. (A short
 * timer ends it too, but is slow to fire on the dev server, which slowed a whole pass.)
 */
const YIELD_EVERY = 5;

/**
 * One tenant's scoring (one run per tenant: a fixed workflow id, woken by signalWithStart). Each
 * round scores one batch of queued entities, then, while a full pass is under way, one batch of
 * it: a single change waits a batch or two, even during a full pass over 100k entities.
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
  // Runs started before queued batches yielded too keep their history's commands.
  const queuedBatchesYield = patched('scorecards-queued-batches-yield');
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    if (!queued && fullAfter === undefined && !(await condition(() => queued, input.idle_ms))) return;
    const yielding = round % YIELD_EVERY === YIELD_EVERY - 1;
    if (queued) {
      queued = false;
      const scoreBatch = yielding && queuedBatchesYield ? scoreQueuedYielding : scoreQueued;
      const batch = await scoreBatch({ tenant_id, limit });
      if (batch.full) fullAfter = null;
      if (batch.more) queued = true;
    }
    if (fullAfter !== undefined) {
      const score = yielding ? scoreRangeYielding : scoreRange;
      const page = await score({ tenant_id, after_id: fullAfter, limit });
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

/**
 * The daily initiative deadline (the `shipyard-initiative-deadlines` schedule): each tenant with
 * an initiative past its target date opens its governance actions, one tenant per activity so a
 * retry repeats one tenant's work (which gov deduplicates) and the history holds only counts.
 */
export async function initiativeDeadlines(): Promise<{ initiatives: number; actions: number }> {
  let initiatives = 0;
  let actions = 0;
  for (const tenant_id of await listTenantsWithDueInitiatives()) {
    const opened = await openInitiativeActions({ tenant_id });
    initiatives += opened.initiatives;
    actions += opened.actions;
  }
  return { initiatives, actions };
}

initiativeDeadlines satisfies InitiativeDeadlinesWorkflow;
