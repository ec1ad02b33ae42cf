import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Outbound webhooks (docs/webhooks.md). `webhook_events` is an outbox: each change records its
// event in its own transaction, so none is lost when the API or a worker dies; the platform
// workers' dispatcher turns undispatched events into one `webhook_deliveries` row per subscribed
// webhook and starts a delivery workflow for each row not yet started, while its webhook and
// tenant have room. A redelivery is a new row with the same `message_id` (the `webhook-id`
// header receivers drop duplicates by).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhooks (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      integration_id uuid not null references integrations(id) on delete cascade,
      url text not null,
      events text[] not null,
      -- Standard Webhooks secret (whsec_...), sealed with the keyring, bound to the tenant.
      secret_sealed text not null,
      active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhooks_by_integration on webhooks (integration_id, created_at, id);
    -- The dispatcher: a tenant's active webhooks.
    create index webhooks_active on webhooks (tenant_id) where active;

    create table webhook_events (
      id uuid primary key default gen_random_uuid(),
      seq bigint generated always as identity unique,
      tenant_id uuid not null references tenants(id) on delete cascade,
      kind text not null check (kind in (
        'entity.created', 'entity.updated', 'entity.deleted',
        'forge.run.completed', 'forge.run.failed', 'forge.run.awaiting_approval',
        'governance.action.created', 'security.finding.opened', 'license.activated', 'agent.registered')),
      data jsonb not null,
      created_at timestamptz not null default clock_timestamp(),
      dispatched_at timestamptz
    );
    create index webhook_events_undispatched on webhook_events (seq) where dispatched_at is null;
    create index webhook_events_by_tenant on webhook_events (tenant_id, seq);

    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      webhook_id uuid not null references webhooks(id) on delete cascade,
      event_id uuid not null references webhook_events(id) on delete cascade,
      message_id text not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      -- Whether its workflow was started: the dispatcher starts those that are not (again after a crash).
      started boolean not null default false,
      attempts integer not null default 0,
      -- The latest attempts, oldest first (DeliveryAttempt), at most 50.
      attempt_log jsonb not null default '[]',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    -- GET .../deliveries: a webhook's newest first.
    create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, created_at desc, id desc);
    create index webhook_deliveries_by_event on webhook_deliveries (event_id);
    create index webhook_deliveries_by_tenant on webhook_deliveries (tenant_id);
    -- The dispatcher: which webhooks have deliveries waiting, and each one's oldest.
    create index webhook_deliveries_waiting on webhook_deliveries (webhook_id, created_at, id) where not started;
    -- The dispatcher's admission: deliveries started and not settled, per webhook and per tenant.
    create index webhook_deliveries_in_flight on webhook_deliveries (webhook_id) where started and status = 'pending';
    create index webhook_deliveries_tenant_in_flight on webhook_deliveries (tenant_id) where started and status = 'pending';

    -- Wakes the dispatcher at commit: a new event, or a redelivery to start (a settled delivery
    -- notifies from core/webhooks/store.ts: its room goes to the next).
    create function webhook_dispatch_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('webhook_dispatch', '');
      return null;
    end $$;
    create trigger webhook_events_notify after insert on webhook_events
      for each statement execute function webhook_dispatch_notify();
    create trigger webhook_deliveries_notify after insert on webhook_deliveries
      for each statement execute function webhook_dispatch_notify();
  `);
  for (const table of ['webhooks', 'webhook_events', 'webhook_deliveries']) await knex.raw(tenantIsolationSql(table));
  // The dispatcher (system role) reads every tenant's events, marks them dispatched and adds deliveries.
  await knex.raw(`
    grant update on webhook_events to shipyard_system;
    grant insert, update on webhook_deliveries to shipyard_system;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table webhook_deliveries, webhook_events, webhooks; drop function webhook_dispatch_notify()');
}
