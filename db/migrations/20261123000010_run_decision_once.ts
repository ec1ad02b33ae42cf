import type { Knex } from 'knex';

// A run takes one decision per approval step and at most one cancel. The API records each
// decision with the step it answers while holding the run's row lock; these indexes make a
// racing second approve or reject of the same step, or a second cancel, a unique violation.
// Decisions recorded before this column existed keep a null position, which never collides.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table run_decisions add column step_position integer;
    create unique index run_decisions_one_per_step on run_decisions (run_id, step_position)
      where decision in ('approve', 'reject');
    create unique index run_decisions_one_cancel on run_decisions (run_id)
      where decision = 'cancel';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index run_decisions_one_cancel;
    drop index run_decisions_one_per_step;
    alter table run_decisions drop column step_position;
  `);
}
