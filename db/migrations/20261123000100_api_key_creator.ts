import type { Knex } from 'knex';

// A key records who created it: `user_id` is the user it belongs to (and counts against), and
// when another API key created it, that key too.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table api_keys add column created_by_key_id uuid references api_keys(id) on delete set null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table api_keys drop column created_by_key_id');
}
