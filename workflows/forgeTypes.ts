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

export const forgeWorkflowId = (runId: string) => `forge-run-${runId}`;
