import { workflowId } from '../searchAttributes';
import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';

// The contracts of the scorecard workflows (workflows/scorecards.ts), named here so the waker,
// the schedules and the tests start them by name without importing workflow code. Only ids,
// counts and batch bounds cross them: no tenant data enters a workflow's history.

/** One scoring workflow per tenant: every wake-up of the same tenant reaches the same run. */
export const scoreTenantWorkflowId = (tenantId: string) => workflowId('scorecards', tenantId);

/** Sent (with signalWithStart) when the tenant has queued work. */
export const SCORECARDS_QUEUED_SIGNAL = 'scorecards-queued';
export type ScorecardsQueuedSignal = typeof SCORECARDS_QUEUED_SIGNAL;

export interface ScoreTenantInput {
  tenant_id: string;
  batch_size: number;
  /** How long the run waits for more work before it ends. */
  idle_ms: number;
  /** A full pass under way (continued as new): the last entity id scored, null from the start. */
  full_after?: string | null;
}
export type ScoreTenantWorkflow = (input: ScoreTenantInput) => Promise<void>;

export const scoreTenantInput = (config: Config, tenantId: string): ScoreTenantInput => ({
  tenant_id: tenantId,
  batch_size: config.scorecards.batchSize,
  idle_ms: config.scorecards.idleMs,
});

export interface QueuedBatch {
  scored: number;
  full: boolean;
  more: boolean;
}

export interface RangeBatch {
  scored: number;
  /** The last entity scored; null when the pass is done. */
  last_id: string | null;
}

export type RescoreAllTenantsWorkflow = () => Promise<{ tenants: number }>;
export type InitiativeDeadlinesWorkflow = () => Promise<{ initiatives: number; actions: number }>;

export const RESCORE_ALL_SCHEDULE_ID = 'shipyard-scorecards-rescore';
export const INITIATIVE_DEADLINES_SCHEDULE_ID = 'shipyard-initiative-deadlines';

/** Every tenant scored again, daily by default: the time-based checks (workloads, crawled docs) move on their own. */
export function rescoreAllSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: RESCORE_ALL_SCHEDULE_ID,
    workflowType: 'rescoreAllTenants',
    pool: 'platform',
    everyMs: config.scorecards.rescoreIntervalMs,
    args: [] satisfies Parameters<RescoreAllTenantsWorkflow>,
    kind: 'scorecards-rescore-all',
  };
}

/** Initiatives past their target date open their governance actions, daily by default. */
export function initiativeDeadlinesSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: INITIATIVE_DEADLINES_SCHEDULE_ID,
    workflowType: 'initiativeDeadlines',
    pool: 'platform',
    everyMs: config.scorecards.initiativeIntervalMs,
    args: [] satisfies Parameters<InitiativeDeadlinesWorkflow>,
    kind: 'initiative-deadlines',
  };
}
