import {
  approvalProblems,
  approvalTimeoutSeconds,
  approverRefusal,
  ruleOf,
  satisfiedClause,
} from '../../core/forge/approvalRules';

// Who may approve a step, and where a rule or a timeout may be set: pure rules.

const facts = { email: 'ann@x.test', teams: ['sre'], roles: ['editor'] };

describe('approver rules', () => {
  test('without a rule any forge:write user may decide, one approval, and never the starter', () => {
    const rule = ruleOf(undefined);
    expect(rule).toEqual({ teams: [], roles: [], users: [], count: 1, allowSelfApproval: false });
    expect(satisfiedClause(rule, facts)).toBe('forge:write');
    expect(approverRefusal(rule, { userId: 'ann', facts }, 'bob')).toBeNull();
    expect(approverRefusal(rule, { userId: 'ann', facts }, 'ann')).toMatch(/starter may not approve or reject it/);
  });

  test('allow_self_approval lets the starter decide when the rule names them', () => {
    const rule = ruleOf({ approvers: { teams: ['sre'], allow_self_approval: true, count: 1 } });
    expect(approverRefusal(rule, { userId: 'ann', facts }, 'ann')).toBeNull();
  });

  test('a caller satisfies a rule by email, team or role, named in that order; outside it they are refused, naming the rule', () => {
    expect(
      satisfiedClause(
        ruleOf({ approvers: { users: ['ann@x.test'], teams: ['sre'], count: 1, allow_self_approval: false } }),
        facts,
      ),
    ).toBe('user:ann@x.test');
    expect(
      satisfiedClause(ruleOf({ approvers: { teams: ['web', 'sre'], count: 1, allow_self_approval: false } }), facts),
    ).toBe('team:sre');
    expect(
      satisfiedClause(ruleOf({ approvers: { roles: ['editor'], count: 1, allow_self_approval: false } }), facts),
    ).toBe('role:editor');
    const outside = ruleOf({
      approvers: { teams: ['web'], users: ['cy@x.test'], count: 2, allow_self_approval: false },
    });
    expect(approverRefusal(outside, { userId: 'ann', facts }, 'bob')).toBe(
      "Only the step's approvers may decide on it: members of team web, user cy@x.test",
    );
  });

  test('approvers and approval_timeout only where an approval is (the mold-wide requires_approval gates the first action); a timeout at most 30 days', () => {
    const script = { name: 's', type: 'script', config: { script: 'true' }, requires_approval: false } as const;
    expect(approvalTimeoutSeconds('72h')).toBe(72 * 3600);
    expect(approvalTimeoutSeconds('30m')).toBe(1800);
    expect(approvalProblems([{ ...script, approval_timeout: '30d' }], true)).toEqual([]);
    expect(approvalProblems([{ ...script, requires_approval: true, approval_timeout: '31d' }], false)).toEqual([
      { field: 'body.actions.0.approval_timeout', message: 'must be at most 30d' },
    ]);
    expect(
      approvalProblems(
        [
          { name: 'a', type: 'approval', requires_approval: false },
          { ...script, approvers: { count: 1, allow_self_approval: false } },
        ],
        true,
      ),
    ).toEqual([
      {
        field: 'body.actions.1.approvers',
        message: 'applies only to an approval action or one with requires_approval',
      },
    ]);
  });
});
