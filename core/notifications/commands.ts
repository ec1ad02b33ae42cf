import type { Knex } from 'knex';
import type { RunStatus } from '../forge/types';
import { ruleOf } from '../forge/approvalRules';
import { eligibleUsers } from '../forge/approverStore';
import { snapshotAction } from '../forge/runStore';
import { usersAssigned, userOfActor } from './recipients';
import { insertNotifications } from './store';

// The triggers' way in: each writes its notifications in the transaction of the change it
// announces, so a notification exists exactly when the change committed.

/** The triggers' one way to notify users (store.ts's insertNotifications says who gets one). */
export const notifyUsers = insertNotifications;

interface RunFacts {
  mold_slug: string;
  started_by: string;
  awaiting_position: number | null;
}

const runFacts = (trx: Knex, runId: string) =>
  trx('runs')
    .where({ id: runId })
    .first<RunFacts | undefined>(
      'mold_slug',
      'started_by',
      trx.raw(
        "(select min(position) from run_steps s where s.run_id = runs.id and s.status = 'awaiting_approval') as awaiting_position",
      ),
    );

const ENDINGS: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/**
 * After a run's status was written (the forge activities, in the same transaction): a run now
 * waiting for approval notifies those who may approve it (its step's approver rule; without one,
 * forge:write holders but its starter), once per approval step; a run that ended notifies its
 * starter (a user, or an API key's owner).
 */
export async function notifyRunStatus(trx: Knex, tenantId: string, runId: string, status: RunStatus): Promise<void> {
  if (status !== 'awaiting_approval' && !ENDINGS.includes(status)) return;
  const run = await runFacts(trx, runId);
  if (!run) return;
  const starter = await userOfActor(trx, run.started_by);
  const payload = { run_id: runId, mold_slug: run.mold_slug, status };
  if (status === 'awaiting_approval') {
    if (run.awaiting_position === null) return;
    // The step's approver rule says who hears of it (every forge:write user without one); the
    // starter only when the rule lets them approve their own run.
    const rule = ruleOf(await snapshotAction(trx, runId, run.awaiting_position));
    const approvers = (await eligibleUsers(trx, rule)).filter((id) => rule.allowSelfApproval || id !== starter);
    await notifyUsers(trx, tenantId, approvers, 'run_awaiting_approval', {
      title: `A run of ${run.mold_slug} waits for your approval`,
      payload: { ...payload, step_position: run.awaiting_position },
      dedupeKey: `run:${runId}:approval:${run.awaiting_position}`,
    });
    return;
  }
  if (!starter) return;
  await notifyUsers(trx, tenantId, [starter], 'run_ended', {
    title: `Your run of ${run.mold_slug} ${status}`,
    payload,
    dedupeKey: `run:${runId}:ended`,
  });
}

/**
 * After a governance action was opened with an assignee or given another one (in the same
 * transaction): the users it names (a user by email, a team's members by its slug) hear of it,
 * except whoever assigned it (`actor`, as audit entries name them).
 */
export async function notifyActionAssigned(
  trx: Knex,
  tenantId: string,
  action: { id: string; title: string; assigned_to: string },
  actor: string,
): Promise<void> {
  const assigner = await userOfActor(trx, actor);
  const assignees = (await usersAssigned(trx, action.assigned_to)).filter((id) => id !== assigner);
  await notifyUsers(trx, tenantId, assignees, 'governance_action_assigned', {
    title: `A governance action is assigned to ${action.assigned_to}: ${action.title}`,
    payload: { action_id: action.id, assigned_to: action.assigned_to },
  });
}
