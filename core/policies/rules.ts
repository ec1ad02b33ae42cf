import { invalid } from '../errors';
import type { PolicyId } from './catalogue';

// What each enforced policy decides, as pure functions of what the write carries.

const DAY_MS = 86_400_000;

/** The 400 of a write a policy refuses: its message and details name the policy. */
export const refusedByPolicy = (id: PolicyId, message: string, field: string) =>
  invalid(`${message} (policy ${id})`, [{ field, message: `refused by policy ${id}` }]);

/** api_key_max_lifetime: why a key expiring at `expiresAt` may not be created, or undefined. */
export function apiKeyLifetimeRefusal(expiresAt: string | undefined, maxDays: number, now: Date): string | undefined {
  if (!expiresAt) return `An API key must have an expires_at at most ${maxDays} days away`;
  if (new Date(expiresAt).getTime() > now.getTime() + maxDays * DAY_MS) {
    return `An API key may live at most ${maxDays} days: expires_at is later`;
  }
  return undefined;
}

/** entity_requires_owner: whether the owner an entity has once written counts as one. */
export const hasOwner = (owner: string | null | undefined): boolean => typeof owner === 'string' && owner.trim() !== '';

/**
 * production_molds_need_approval: every string a run carries (its parameters, its actions'
 * configs), as candidates for the service_id of a production entity. Iterative, so no depth of
 * value exhausts the stack; the run's parameters are already bounded in bytes.
 */
export function stringsIn(values: unknown[]): string[] {
  const found = new Set<string>();
  const pending = [...values];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next === 'string') found.add(next);
    else if (next && typeof next === 'object') for (const value of Object.values(next)) pending.push(value);
  }
  return [...found];
}

/**
 * Whether an approval gates a run's first step: it requires approval, or it is an approval, and
 * not one its starter may give themselves (`allow_self_approval`): that is no second person.
 */
export const approvalGatesFirstStep = (
  steps: { type: string; requiresApproval: boolean; selfApproval?: boolean }[],
): boolean => steps.length > 0 && (steps[0].requiresApproval || steps[0].type === 'approval') && !steps[0].selfApproval;
