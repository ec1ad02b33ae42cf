import type { Knex } from 'knex';

// The tenancy base: the function every RLS policy reads, the tenants table, and the table the
// worker-pool probe writes to.
export async function up(knex: Knex): Promise<void> {
  // A missing or empty setting yields NULL, and `tenant_id = NULL` matches no row: a session
  // without tenant context sees nothing.
  await knex.raw(`
    create function app_current_tenant() returns uuid
      language sql stable
      as $$ select nullif(current_setting('app.tenant_id', true), '')::uuid $$;
  `);

  await knex.raw(`
    create table tenants (
      id uuid primary key default gen_random_uuid(),
      slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
      name text not null,
      created_at timestamptz not null default now()
    );
    alter table tenants enable row level security;
    alter table tenants force row level security;
    create policy tenant_isolation on tenants
      using (id = app_current_tenant())
      with check (id = app_current_tenant());
  `);

  // Not tenant data: the last probe each worker pool answered (API → Temporal → worker → database).
  await knex.raw(`
    create table worker_probes (
      pool text primary key,
      worker_identity text not null,
      probed_at timestamptz not null
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table worker_probes; drop table tenants; drop function app_current_tenant();');
}
