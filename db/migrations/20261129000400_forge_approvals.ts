import type { Knex } from 'knex';

// Forge, second round. Approver rules: a step may take several approvals, one per distinct
// user (`approver_user_id`, the person behind a session or an API key), each with the part of
// the rule it satisfied; a reject still ends the step, so at most one per step. Retry: a run
// points to the failed run it retries, and a step it skipped because it completed there points
// to the run it completed in.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table run_decisions add column approver_user_id uuid, add column satisfied_rule text;
    drop index run_decisions_one_per_step;
    create unique index run_decisions_one_approve_per_user on run_decisions (run_id, step_position, approver_user_id)
      where decision = 'approve';
    create unique index run_decisions_one_reject_per_step on run_decisions (run_id, step_position)
      where decision = 'reject';

    alter table runs add column retry_of uuid references runs(id) on delete set null;
    create index runs_retry_of on runs (retry_of);
    alter table run_steps add column completed_in uuid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table run_steps drop column completed_in;
    alter table runs drop column retry_of;
    drop index run_decisions_one_reject_per_step;
    drop index run_decisions_one_approve_per_user;
    create unique index run_decisions_one_per_step on run_decisions (run_id, step_position)
      where decision in ('approve', 'reject');
    alter table run_decisions drop column satisfied_rule, drop column approver_user_id;
  `);
}
