import type { Knex } from 'knex';

// The identity-provider groups of a user as of their latest sign-in (the token's `groups`
// claim): what GET /groups counts as members and GET /users/{id} reports.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table users add column idp_groups text[] not null default '{}';
    create index users_idp_groups on users using gin (idp_groups);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table users drop column idp_groups');
}
