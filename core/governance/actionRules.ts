import { conflict, type ApiError } from '../errors';
import { ACTIONABLE_STATUSES, FINAL_STATUSES, type ActionFilter, type ActionStatus } from './types';

// The governance actions' pure rules: which status moves a PATCH may make, and which list
// filters contradict each other.

export const isFinal = (status: ActionStatus): boolean => (FINAL_STATUSES as readonly ActionStatus[]).includes(status);

export const isActionable = (status: ActionStatus): boolean =>
  (ACTIONABLE_STATUSES as readonly ActionStatus[]).includes(status);

/**
 * A PATCH's status move (the spec: any non-final state → the requested status). A final action
 * may be reopened (→ open or in_progress) or left as it is; moving it from one final state to
 * another is refused (409), so a resolution is never silently rewritten: reopen it first.
 * Returns the refusal, or undefined when the move is allowed.
 */
export function actionMoveRefusal(from: ActionStatus, to: ActionStatus): ApiError | undefined {
  if (!(isFinal(from) && isFinal(to) && from !== to)) return undefined;
  return conflict(`The action is ${from}, a final state: reopen it (open or in_progress) before setting it to ${to}`);
}

/**
 * The filters that contradict `closed=true` (final actions only) by matching only active ones:
 * the spec's one refused combination. Empty when there is no conflict.
 */
export function filtersConflictingWithClosed(filter: ActionFilter): { name: keyof ActionFilter; value: string }[] {
  if (filter.closed !== true) return [];
  const conflicts: { name: keyof ActionFilter; value: string }[] = [];
  if (filter.status !== undefined && isActionable(filter.status))
    conflicts.push({ name: 'status', value: filter.status });
  if (filter.actionable === true) conflicts.push({ name: 'actionable', value: 'true' });
  if (filter.overdue === true) conflicts.push({ name: 'overdue', value: 'true' });
  return conflicts;
}
