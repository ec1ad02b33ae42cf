import type { DecisionKind, RunStatus } from './types';

// When a run may be approved, rejected or cancelled. Pure: the caller reads the state under the
// run's row lock, so two decisions on one run are judged one after the other.

export interface RunDecisionState {
  status: RunStatus;
  /** The step waiting for approval, if any. */
  awaitingPosition: number | null;
  /** Decisions taken so far; `step_position` is the step an approve or reject answered. */
  decisions: {
    decision: DecisionKind;
    step_position: number | null;
    actor: string;
    approver_user_id?: string | null;
  }[];
}

const DECISION_ALLOWED_FROM: Record<DecisionKind, readonly RunStatus[]> = {
  approve: ['awaiting_approval'],
  reject: ['awaiting_approval'],
  cancel: ['pending', 'running', 'awaiting_approval'],
};

const PAST: Record<DecisionKind, string> = { approve: 'approved', reject: 'rejected', cancel: 'cancelled' };

/**
 * Why `kind` cannot be taken now, or null. The database status lags the workflow, so decisions
 * already accepted count too: after a cancel or a reject the run is ending and takes no other
 * decision, and the step waiting for approval takes `required` approves from distinct users
 * (`userId`: the caller's), or one reject.
 */
export function decisionConflict(
  kind: DecisionKind,
  state: RunDecisionState,
  approval: { userId?: string; required: number } = { required: 1 },
): string | null {
  const refusal = `Cannot ${kind} a run that is ${state.status}`;
  if (!DECISION_ALLOWED_FROM[kind].includes(state.status)) return refusal;
  const ending = state.decisions.find((d) => d.decision === 'cancel' || d.decision === 'reject');
  if (ending) return `${refusal}: it was already ${PAST[ending.decision]} by ${ending.actor}`;
  if (kind === 'cancel') return null;
  if (state.awaitingPosition === null) return `${refusal}: no step is waiting for approval yet`;
  const approves = state.decisions.filter(
    (d) => d.decision === 'approve' && d.step_position === state.awaitingPosition,
  );
  const by = approves.map(({ actor }) => actor).join(', ');
  if (approves.length >= approval.required)
    return `${refusal}: step ${state.awaitingPosition} was already approved by ${by}`;
  const own = approval.userId === undefined ? undefined : approves.find((d) => d.approver_user_id === approval.userId);
  return own
    ? `${refusal}: step ${state.awaitingPosition} was already approved by ${own.actor}; an approver counts once`
    : null;
}
