import type { Knex } from 'knex';

// A full scoring pass walks a tenant's entities in id order, a batch at a time: a keyset range
// of this index, not a walk of the primary key through every tenant's rows.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index entities_by_id on entities (tenant_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index entities_by_id');
}
