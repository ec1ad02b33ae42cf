import type { Knex } from 'knex';

// A deleted tenant's queued re-scores go with it: left behind, they woke a scoring workflow whose
// batches failed on the missing tenant, again at every poll. (Entities stay without a foreign
// key: a deleted entity's row drains to nothing.) The queue ships in the same release as this
// key, so no deployment holds a row of a deleted tenant to validate against.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table scorecard_queue add constraint scorecard_queue_tenant_fk
      foreign key (tenant_id) references tenants(id) on delete cascade;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table scorecard_queue drop constraint scorecard_queue_tenant_fk');
}
