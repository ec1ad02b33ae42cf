import type { Knex } from 'knex';

// Indexes for the queries that run on every request and for every foreign key, so a parent's
// delete or a join never scans a child table across tenants. test/integration/indexes.test.ts
// walks the catalog and fails on a foreign key without one.
const INDEXES = [
  // Session principals: the group → team → role branch of rolesOfUser, in the caller's tenant.
  'create index team_group_mappings_by_group on team_group_mappings (tenant_id, group_name)',
  'create index team_group_mappings_team on team_group_mappings (team_id)',
  // GET /admin/api-keys lists a tenant's keys, newest first; deleting a user drops its keys.
  'create index api_keys_recent on api_keys (tenant_id, created_at desc)',
  'create index api_keys_user on api_keys (user_id)',
  'create index api_keys_created_by_key on api_keys (created_by_key_id)',
  'create index runs_mold on runs (mold_id)',
  'create index teams_parent on teams (parent_id)',
];

export async function up(knex: Knex): Promise<void> {
  // The full user index serves the active-key count too.
  await knex.raw('drop index api_keys_active_per_user');
  for (const index of INDEXES) await knex.raw(index);
}

export async function down(knex: Knex): Promise<void> {
  for (const index of INDEXES) await knex.raw(`drop index ${index.split(' ')[2]}`);
  await knex.raw('create index api_keys_active_per_user on api_keys (user_id) where revoked_at is null');
}
