// Shapes that cross the API → workflow → activity boundary, defined once. Types only, so the
// workflow bundle stays free of I/O code.

export type ActionType = 'vcs-host-a-action' | 'api-call' | 'script' | 'approval';
export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'skipped' | 'awaiting_approval';
export type RunStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'awaiting_approval';

export interface RunStepSpec {
  position: number;
  name: string;
  type: ActionType;
  config: Record<string, unknown>;
  requiresApproval: boolean;
}

export interface ForgeRunInput {
  tenantId: string;
  runId: string;
  steps: RunStepSpec[];
  parameters: Record<string, unknown>;
}

/** Who approved, rejected or cancelled, with an optional comment. */
export interface Decision {
  actor: string;
  comment?: string;
}

/** An approve or reject names the approval step it answers, so it can never apply to another. */
export interface StepDecision extends Decision {
  position: number;
}

/**
 * What writing a run's status did. `cancel-accepted`: the run was about to end otherwise, but
 * the API had already accepted a cancel (its signal is on the way), so the run must end cancelled.
 */
export type MarkRunResult = 'written' | 'not-visible' | 'cancel-accepted';

export const forgeWorkflowId = (runId: string) => `forge-run-${runId}`;
