import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// The search outbox: every write to a searchable table adds a row naming the document, in the
// writing transaction, by a trigger, so no write path (API, manifests, agents, the crawler, a
// hand-run UPDATE) can skip it. The search workers drain it to Elasticsearch and delete rows
// only once the engine has acknowledged them. A row names the document, not its contents: the
// drain indexes the row's state when it runs (or deletes the document when the row is gone).
const SEARCHABLE_TABLES = { entities: 'entities', molds: 'molds', users: 'users', teams: 'teams' } as const;

const OPERATIONS = { insert: 'new_rows', update: 'new_rows', delete: 'old_rows' } as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table search_outbox (
      id bigint generated always as identity primary key,
      -- No foreign key: the rows of a deleted tenant still drain, to delete its documents.
      tenant_id uuid not null,
      collection text not null check (collection in ('entities', 'molds', 'users', 'teams')),
      document_id uuid not null,
      created_at timestamptz not null default now()
    );
    -- /indexing/status: a tenant's backlog and its oldest row.
    create index search_outbox_by_tenant on search_outbox (tenant_id, id);

    -- One row per affected row of the statement (transition tables: a bulk insert is one
    -- INSERT ... SELECT, not a trigger call per row), and one notification per transaction
    -- (NOTIFY folds equal payloads), which wakes the drain at commit.
    create function search_outbox_enqueue() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        insert into search_outbox (tenant_id, collection, document_id)
          select tenant_id, tg_argv[0], id from old_rows;
      else
        insert into search_outbox (tenant_id, collection, document_id)
          select tenant_id, tg_argv[0], id from new_rows;
      end if;
      perform pg_notify('search_outbox', '');
      return null;
    end $$;
  `);
  await knex.raw(tenantIsolationSql('search_outbox'));
  // The drain reads every tenant's rows through the system role and deletes what it indexed.
  await knex.raw('grant update, delete on search_outbox to shipyard_system');
  for (const [collection, table] of Object.entries(SEARCHABLE_TABLES)) {
    for (const [operation, transition] of Object.entries(OPERATIONS)) {
      await knex.raw(`
        create trigger ${table}_search_outbox_${operation} after ${operation} on ${table}
          referencing ${transition === 'new_rows' ? 'new' : 'old'} table as ${transition}
          for each statement execute function search_outbox_enqueue('${collection}')
      `);
    }
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of Object.values(SEARCHABLE_TABLES)) {
    for (const operation of Object.keys(OPERATIONS)) {
      await knex.raw(`drop trigger ${table}_search_outbox_${operation} on ${table}`);
    }
  }
  await knex.raw('drop function search_outbox_enqueue(); drop table search_outbox');
}
