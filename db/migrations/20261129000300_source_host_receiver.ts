import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// The source-host receiver (POST /integrations/vcs-host-a/webhook): the delivery ids it has
// processed, per integration. A redelivery (the host's retry, or a replay of a captured
// request) inserts the same key and is answered `duplicate`; the insert is in the transaction
// that processes the delivery, so two copies arriving together process once. Rows older than
// the receiver's retention are pruned by the deliveries of the same integration.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table source_host_deliveries (
      integration_id uuid not null references integrations(id) on delete cascade,
      delivery_id text not null check (length(delivery_id) between 1 and 200),
      tenant_id uuid not null references tenants(id) on delete cascade,
      event text not null check (length(event) between 1 and 100),
      received_at timestamptz not null default now(),
      primary key (integration_id, delivery_id)
    );
    create index source_host_deliveries_by_tenant on source_host_deliveries (tenant_id);
    -- The pruning: an integration's deliveries older than the retention.
    create index source_host_deliveries_by_age on source_host_deliveries (integration_id, received_at);
  `);
  await knex.raw(tenantIsolationSql('source_host_deliveries'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table source_host_deliveries');
}
