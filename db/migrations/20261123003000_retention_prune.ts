import type { Knex } from 'knex';

// Retention deletes expired run logs and audit entries of every tenant, and no role may do that:
// the app role sees one tenant at a time (RLS), the system role only reads, and FORCE ROW LEVEL
// SECURITY filters even the owner. Rather than give a role cross-tenant delete rights on these
// tables, one function does exactly this job with the owner's rights (SECURITY DEFINER), and
// only the app role (the platform worker's activities) may call it. It deletes only from
// run_logs or audit_log, only rows older than a retention of at least one day, and at most
// 10,000 rows per call, so each call is a short transaction holding few locks; the caller loops.
//
// Under FORCE RLS the owner needs a policy to see and delete rows. The policies below let the
// owner do so only while `shipyard.retention_prune` is on, which the function sets around its own
// delete and nothing else does. (A SET clause on the function would scope it more neatly, but
// PostgreSQL 15 lets only a superuser attach a custom setting to a function.)
const TABLES = ['run_logs', 'audit_log'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    // Expired rows are found across tenants by age; the tenant-first indexes cannot serve that.
    await knex.raw(`create index ${table}_created on ${table} (created_at)`);
    for (const command of ['select', 'delete']) {
      await knex.raw(`
        create policy retention_prune_${command} on ${table} for ${command} to shipyard_owner
          using (current_setting('shipyard.retention_prune', true) = 'on')`);
    }
  }
  await knex.raw(`
    create function prune_expired_rows(target text, keep_days integer, batch_size integer) returns integer
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
      if target = 'run_logs' then
        delete from run_logs where id in (
          select id from run_logs where created_at < cutoff order by created_at limit batch_size);
      elsif target = 'audit_log' then
        delete from audit_log where id in (
          select id from audit_log where created_at < cutoff order by created_at limit batch_size);
      else
        raise exception 'no retention for table %', target;
      end if;
      get diagnostics deleted = row_count;
      perform set_config('shipyard.retention_prune', 'off', true);
      return deleted;
    end
    $$;
    revoke all on function prune_expired_rows(text, integer, integer) from public;
    grant execute on function prune_expired_rows(text, integer, integer) to shipyard_app;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function prune_expired_rows(text, integer, integer)');
  for (const table of TABLES) {
    for (const command of ['select', 'delete']) await knex.raw(`drop policy retention_prune_${command} on ${table}`);
    await knex.raw(`drop index ${table}_created`);
  }
}
