import type { Knex } from 'knex';

// What a signed-in user may do is read from these tables (core/auth/store.ts rolesOfUser), and
// the API caches the result per session (api/auth/sessionPrincipalCache.ts). Any change to them,
// cascades included, announces the tenant on `shipyard_access_changed` at commit, so every API
// process drops that tenant's cached principals. Triggers rather than a notify in each command:
// team and bundle deletions change assignments through cascades no command sees. Users count
// when a row goes away or changes subject (an account re-linked), not on sign-in refreshes.
const ASSIGNMENT_TABLES = [
  'user_roles',
  'team_roles',
  'team_members',
  'team_group_mappings',
  'group_roles',
  'role_bundles',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function notify_access_changed() returns trigger
      language plpgsql
      as $$
      begin
        perform pg_notify('shipyard_access_changed',
          (case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end)::text);
        return null;
      end $$`);
  for (const table of ASSIGNMENT_TABLES) {
    await knex.raw(`
      create trigger ${table}_access_changed after insert or update or delete on ${table}
        for each row execute function notify_access_changed()`);
  }
  await knex.raw(`
    create trigger users_access_changed after delete or update of subject on users
      for each row execute function notify_access_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...ASSIGNMENT_TABLES, 'users']) {
    await knex.raw(`drop trigger ${table}_access_changed on ${table}`);
  }
  await knex.raw('drop function notify_access_changed()');
}
