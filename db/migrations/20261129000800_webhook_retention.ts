import type { Knex } from 'knex';

// Retention of outbound webhook events (docs/webhooks.md): prune_expired_rows (the one
// cross-tenant delete, 20261123003000_retention_prune.ts) learns a third table. An event goes
// once it was dispatched longer ago than its retention and none of its deliveries is still
// pending; its deliveries and their attempt logs go with it (on delete cascade). The owner's
// policies, on only while the function runs, let it see events and deliveries to decide that.

/** Each table the function prunes, and the delete of one batch of its rows older than `cutoff`. */
const PRUNES: Record<string, string> = {
  run_logs: `delete from run_logs where id in (
          select id from run_logs where created_at < cutoff order by created_at limit batch_size)`,
  audit_log: `delete from audit_log where id in (
          select id from audit_log where created_at < cutoff order by created_at limit batch_size)`,
  webhook_events: `delete from webhook_events where id in (
          select e.id from webhook_events e
          where e.dispatched_at < cutoff
            and not exists (select from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
          order by e.dispatched_at limit batch_size)`,
};

const POLICIES = [
  ['webhook_events', 'select'],
  ['webhook_events', 'delete'],
  ['webhook_deliveries', 'select'],
  ['webhook_deliveries', 'delete'],
] as const;

function pruneFunction(tables: string[]): string {
  const branches = tables
    .map((table, i) => `${i ? 'elsif' : 'if'} target = '${table}' then\n        ${PRUNES[table]};`)
    .join('\n      ');
  return `
    create or replace function prune_expired_rows(target text, keep_days integer, batch_size integer) returns integer
      language plpgsql
      security definer
      set search_path = pg_catalog, public
    as $$
    declare
      cutoff timestamptz;
      deleted integer;
    begin
      if keep_days is null or keep_days < 1 then
        raise exception 'keep_days must be at least 1, got %', keep_days;
      end if;
      if batch_size is null or batch_size < 1 or batch_size > 10000 then
        raise exception 'batch_size must be between 1 and 10000, got %', batch_size;
      end if;
      cutoff := now() - make_interval(days => keep_days);
      -- Transaction-local, and switched off again below (or rolled back with an error).
      perform set_config('shipyard.retention_prune', 'on', true);
      ${branches}
      else
        raise exception 'no retention for table %', target;
      end if;
      get diagnostics deleted = row_count;
      perform set_config('shipyard.retention_prune', 'off', true);
      return deleted;
    end
    $$`;
}

export async function up(knex: Knex): Promise<void> {
  // Expired events are found across tenants by when they were dispatched.
  await knex.raw(
    'create index webhook_events_dispatched on webhook_events (dispatched_at) where dispatched_at is not null',
  );
  for (const [table, command] of POLICIES) {
    await knex.raw(`
      create policy retention_prune_${command} on ${table} for ${command} to shipyard_owner
        using (current_setting('shipyard.retention_prune', true) = 'on')`);
  }
  await knex.raw(pruneFunction(['run_logs', 'audit_log', 'webhook_events']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(pruneFunction(['run_logs', 'audit_log']));
  for (const [table, command] of POLICIES) await knex.raw(`drop policy retention_prune_${command} on ${table}`);
  await knex.raw('drop index webhook_events_dispatched');
}
