import { conflict, invalid } from '../errors';
import { ACTIONABLE_STATUSES, FINAL_STATUSES, type ActionFilter, type ActionStatus } from './types';

// The governance actions' pure rules: which status moves a PATCH may make, and which list
// filters contradict each other.

export const isFinal = (status: ActionStatus): boolean => (FINAL_STATUSES as readonly ActionStatus[]).includes(status);

export const isActionable = (status: ActionStatus): boolean =>
  (ACTIONABLE_STATUSES as readonly ActionStatus[]).includes(status);

/**
 * A PATCH's status move (the spec: any non-final state → the requested status). A final action
 * may be reopened (→ open or in_progress) or left as it is; moving it from one final state to
 * another is a 409, so a resolution is never silently rewritten: reopen it first.
 */
export function assertActionMove(from: ActionStatus, to: ActionStatus): void {
  if (isFinal(from) && isFinal(to) && from !== to) {
    throw conflict(`The action is ${from}, a final state: reopen it (open or in_progress) before setting it to ${to}`);
  }
}

/** The filters that match only actionable actions, which `closed=true` (final actions only) contradicts. */
function activeOnlyFilters(filter: ActionFilter): string[] {
  const names: string[] = [];
  if (filter.status !== undefined && isActionable(filter.status)) names.push(`status=${filter.status}`);
  if (filter.actionable === true) names.push('actionable=true');
  if (filter.overdue === true) names.push('overdue=true');
  return names;
}

/** The spec's one refused combination: `closed=true` with a filter that matches only active actions. */
export function assertCompatibleFilters(filter: ActionFilter): void {
  if (filter.closed !== true) return;
  const active = activeOnlyFilters(filter);
  if (active.length === 0) return;
  throw invalid(`closed=true (final actions only) cannot be combined with ${active.join(', ')} (active actions only)`, [
    { field: 'closed', message: 'true matches only final actions (resolved, dismissed, wont_fix)' },
    ...active.map((name) => ({ field: name.split('=')[0], message: `${name} matches only active actions` })),
  ]);
}
