import { decisionConflict, type RunDecisionState } from '../../core/forge/decisionRules';

// When a run may be approved, rejected or cancelled, judged from its state under the row lock.

const waiting = (decisions: RunDecisionState['decisions'] = []): RunDecisionState => ({
  status: 'awaiting_approval',
  awaitingPosition: 1,
  decisions,
});

describe('decisionConflict', () => {
  test('a run waiting on a step with no decision yet can be approved, rejected or cancelled', () => {
    for (const kind of ['approve', 'reject', 'cancel'] as const) expect(decisionConflict(kind, waiting())).toBeNull();
  });

  test('a second approve or reject of the same step is refused, naming the status and the first decision', () => {
    const state = waiting([{ decision: 'approve', step_position: 1, actor: 'ann' }]);
    expect(decisionConflict('approve', state)).toBe(
      'Cannot approve a run that is awaiting_approval: step 1 was already approved by ann',
    );
    expect(decisionConflict('reject', state)).toBe(
      'Cannot reject a run that is awaiting_approval: step 1 was already approved by ann',
    );
  });

  test('an approve of an earlier step does not count for the step waiting now', () => {
    expect(decisionConflict('approve', waiting([{ decision: 'approve', step_position: 0, actor: 'ann' }]))).toBeNull();
  });

  test('after an accepted approve the run can still be cancelled (it is running on)', () => {
    expect(decisionConflict('cancel', waiting([{ decision: 'approve', step_position: 1, actor: 'ann' }]))).toBeNull();
  });

  test('after an accepted reject or cancel the run is ending: every further decision is refused', () => {
    const ending = [
      { decision: 'reject', step_position: 1, actor: 'bob', past: 'rejected' },
      { decision: 'cancel', step_position: null, actor: 'bob', past: 'cancelled' },
    ] as const;
    for (const { past, ...decision } of ending) {
      for (const kind of ['approve', 'reject', 'cancel'] as const) {
        expect(decisionConflict(kind, waiting([decision]))).toBe(
          `Cannot ${kind} a run that is awaiting_approval: it was already ${past} by bob`,
        );
      }
    }
  });

  test('a step whose rule wants two approvals takes a second approve from another user, not from the same one; a reject by another still counts', () => {
    const state = waiting([{ decision: 'approve', step_position: 1, actor: 'ann', approver_user_id: 'u-ann' }]);
    expect(decisionConflict('approve', state, { userId: 'u-bob', required: 2 })).toBeNull();
    expect(decisionConflict('reject', state, { userId: 'u-bob', required: 2 })).toBeNull();
    expect(decisionConflict('approve', state, { userId: 'u-ann', required: 2 })).toBe(
      'Cannot approve a run that is awaiting_approval: step 1 was already approved by ann; an approver counts once',
    );
    const both = waiting([
      { decision: 'approve', step_position: 1, actor: 'ann', approver_user_id: 'u-ann' },
      { decision: 'approve', step_position: 1, actor: 'bob', approver_user_id: 'u-bob' },
    ]);
    expect(decisionConflict('approve', both, { userId: 'u-cy', required: 2 })).toBe(
      'Cannot approve a run that is awaiting_approval: step 1 was already approved by ann, bob',
    );
  });

  test('approve and reject need the awaiting_approval status and a step waiting; cancel needs an unfinished run', () => {
    expect(decisionConflict('reject', { status: 'completed', awaitingPosition: null, decisions: [] })).toBe(
      'Cannot reject a run that is completed',
    );
    expect(decisionConflict('approve', { status: 'running', awaitingPosition: null, decisions: [] })).toBe(
      'Cannot approve a run that is running',
    );
    expect(decisionConflict('cancel', { status: 'failed', awaitingPosition: null, decisions: [] })).toBe(
      'Cannot cancel a run that is failed',
    );
    expect(decisionConflict('cancel', { status: 'pending', awaitingPosition: null, decisions: [] })).toBeNull();
    expect(decisionConflict('approve', { status: 'awaiting_approval', awaitingPosition: null, decisions: [] })).toBe(
      'Cannot approve a run that is awaiting_approval: no step is waiting for approval yet',
    );
  });
});
