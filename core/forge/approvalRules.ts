import type { ErrorDetail } from '../errors';
import { MAX_APPROVAL_TIMEOUT_DAYS, type ApproverRule, type MoldAction } from './types';

// Who may approve a step, and how far its approval has come. Pure: the caller reads the rule
// (from the run's copy of its mold), the caller's memberships and the decisions taken so far.

const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400 } as const;

/** Seconds of an `approval_timeout` (`72h`); its schema's pattern has checked the form. */
export const approvalTimeoutSeconds = (timeout: string): number =>
  Number(timeout.slice(0, -1)) * UNIT_SECONDS[timeout.slice(-1) as keyof typeof UNIT_SECONDS];

/** Does the action wait for a decision? `gatesFirst`: the mold-wide requires_approval, which gates the first action. */
export const actionNeedsApproval = (action: Pick<MoldAction, 'type' | 'requires_approval'>, gatesFirst: boolean) =>
  action.type === 'approval' || action.requires_approval === true || gatesFirst;

/** What a mold's actions say about approvals that one JSON Schema cannot: rules only where an approval is. */
export function approvalProblems(actions: readonly MoldAction[], moldRequiresApproval: boolean): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  actions.forEach((action, index) => {
    const field = `body.actions.${index}`;
    const needsApproval = actionNeedsApproval(action, index === 0 && moldRequiresApproval);
    for (const key of ['approvers', 'approval_timeout'] as const) {
      if (action[key] !== undefined && !needsApproval)
        problems.push({
          field: `${field}.${key}`,
          message: 'applies only to an approval action or one with requires_approval',
        });
    }
    if (
      action.approval_timeout !== undefined &&
      approvalTimeoutSeconds(action.approval_timeout) > MAX_APPROVAL_TIMEOUT_DAYS * UNIT_SECONDS.d
    )
      problems.push({
        field: `${field}.approval_timeout`,
        message: `must be at most ${MAX_APPROVAL_TIMEOUT_DAYS}d`,
      });
  });
  return problems;
}

/** A rule with its defaults (none given: any forge:write user but the starter, one approval). */
export function ruleOf(action: Pick<MoldAction, 'approvers'> | undefined) {
  const rule: Partial<ApproverRule> = action?.approvers ?? {};
  return {
    teams: rule.teams ?? [],
    roles: rule.roles ?? [],
    users: rule.users ?? [],
    count: rule.count ?? 1,
    allowSelfApproval: rule.allow_self_approval ?? false,
  };
}

export type ResolvedRule = ReturnType<typeof ruleOf>;

/** Does the rule name anyone, or leave approval to every forge:write user? */
export const namesApprovers = (rule: ResolvedRule) => rule.teams.length + rule.roles.length + rule.users.length > 0;

/** A caller as a rule sees them: their email, the slugs of their teams, their roles (however held). */
export interface ApproverFacts {
  email: string | undefined;
  teams: string[];
  roles: string[];
}

/** The part of the rule a caller satisfies (`team:team-sre`, `role:editor`, `user:a@b.c`, `forge:write`), or null. */
export function satisfiedClause(rule: ResolvedRule, facts: ApproverFacts): string | null {
  if (!namesApprovers(rule)) return 'forge:write';
  if (facts.email !== undefined && rule.users.includes(facts.email)) return `user:${facts.email}`;
  const team = rule.teams.find((slug) => facts.teams.includes(slug));
  if (team) return `team:${team}`;
  const role = rule.roles.find((key) => facts.roles.includes(key));
  return role ? `role:${role}` : null;
}

/** Why the caller may not decide on the step, or null: the starter (unless the rule allows it), or outside the rule. */
export function approverRefusal(
  rule: ResolvedRule,
  caller: { userId: string; facts: ApproverFacts },
  starterUserId: string | undefined,
): string | null {
  if (caller.userId === starterUserId && !rule.allowSelfApproval)
    return "The run's starter may not approve or reject it (the step's approvers do not allow_self_approval)";
  return satisfiedClause(rule, caller.facts) === null
    ? `Only the step's approvers may decide on it: ${describeRule(rule)}`
    : null;
}

/** The rule in words, for a refusal. */
export function describeRule(rule: ResolvedRule): string {
  const named = [
    ...rule.teams.map((slug) => `team ${slug}`),
    ...rule.roles.map((key) => `role ${key}`),
    ...rule.users.map((email) => `user ${email}`),
  ];
  return named.length ? `members of ${named.join(', ')}` : 'any forge:write user';
}
