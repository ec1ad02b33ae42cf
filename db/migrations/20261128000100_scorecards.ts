import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Scorecards: a tenant's categories, rules and grading thresholds; each entity's latest result;
// initiatives; and the queue that drives re-scoring. The queue is filled by triggers in the
// writing transaction (as the search outbox is), so no write path can skip a re-score, and the
// platform worker drains it; a row without an entity asks for the whole tenant.
//
// Triggers that watch changed columns are row triggers with a WHEN condition: they fire, in C,
// for the changed rows alone. A statement trigger joining the old and new transition tables
// cannot be indexed nor estimated by the planner, and a bulk update of n rows met an n² nested
// loop.
const TENANT_TABLES = [
  'scorecard_categories',
  'scorecard_rules',
  'scorecard_grading',
  'entity_scorecards',
  'scorecard_initiatives',
  'scorecard_queue',
];

const GRADES = `('A+', 'A', 'B', 'C', 'D', 'F')`;

const ENTITY_FIELDS = ['owner', 'description', 'tier', 'tags', 'links', 'lifecycle', 'readme', 'type'];
const tuple = (alias: string) => `(${ENTITY_FIELDS.map((field) => `${alias}.${field}`).join(', ')})`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scorecard_categories (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null check (length(name) between 1 and 200),
      description text,
      weight numeric not null check (weight > 0),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, name)
    );

    create table scorecard_rules (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      -- A category with rules cannot be deleted (the API answers 409).
      category_id uuid not null references scorecard_categories(id) on delete restrict,
      name text not null check (length(name) between 1 and 200),
      description text,
      weight numeric not null check (weight > 0),
      -- A failing rule with a severity opens a security finding of finding_type.
      severity text check (severity in ('critical', 'high', 'medium', 'low', 'info')),
      finding_type text,
      "check" jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, name)
    );
    create index scorecard_rules_by_category on scorecard_rules (category_id);
    create index scorecard_rules_by_tenant on scorecard_rules (tenant_id, created_at, id);

    -- One row per tenant: the lowest total (0-100) of each grade; below d is F.
    create table scorecard_grading (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      a_plus numeric not null,
      a numeric not null,
      b numeric not null,
      c numeric not null,
      d numeric not null,
      updated_at timestamptz not null default now(),
      check (a_plus <= 100 and a_plus > a and a > b and b > c and c > d and d >= 0)
    );

    create table entity_scorecards (
      entity_id uuid primary key references entities(id) on delete cascade,
      tenant_id uuid not null references tenants(id) on delete cascade,
      score numeric not null check (score between 0 and 100),
      grade text not null check (grade in ${GRADES}),
      -- [{category_id, name, weight, score}]
      category_scores jsonb not null default '[]',
      -- [{rule_id, name, category_id, weight, passed, reason}]
      rule_results jsonb not null default '[]',
      -- The entity's updated_at when it was evaluated.
      entity_version timestamptz not null,
      evaluated_at timestamptz not null default now()
    );
    -- The grade filter of /entities and the grade counts of /security/overview.
    create index entity_scorecards_by_grade on entity_scorecards (tenant_id, grade);

    create table scorecard_initiatives (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null check (length(name) between 1 and 200),
      description text,
      rule_ids uuid[] not null,
      -- {type, lifecycle, tier, owner}: which entities the initiative covers.
      entity_filter jsonb not null default '{}',
      target_date date not null,
      -- Set once the past-due governance actions were opened, so they open once.
      actions_opened_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index scorecard_initiatives_by_tenant on scorecard_initiatives (tenant_id, created_at, id);
    create index scorecard_initiatives_due on scorecard_initiatives (target_date) where actions_opened_at is null;

    create table scorecard_queue (
      id bigint generated always as identity primary key,
      -- A deleted tenant's queued re-scores go with it: left behind, they woke a scoring
      -- workflow whose batches failed on the missing tenant, again at every poll.
      tenant_id uuid not null constraint scorecard_queue_tenant_fk references tenants(id) on delete cascade,
      -- null: re-score every entity of the tenant (a rule, category or grading change, nightly).
      -- No foreign key: a deleted entity's row drains to nothing.
      entity_id uuid,
      created_at timestamptz not null default now()
    );
    create index scorecard_queue_by_tenant on scorecard_queue (tenant_id, id);

    -- An entity is re-scored when what its checks read changes: the entity itself (not its
    -- activity clock), its outgoing relations, and (for no_deprecated_dependencies) the lifecycle
    -- of an entity it depends on.
    create function scorecard_enqueue_entities() returns trigger language plpgsql as $$
    begin
      insert into scorecard_queue (tenant_id, entity_id) select tenant_id, id from new_rows;
      perform pg_notify('scorecard_queue', '');
      return null;
    end $$;
    create trigger entities_scorecard_insert after insert on entities
      referencing new table as new_rows for each statement execute function scorecard_enqueue_entities();

    create function scorecard_enqueue_changed_entity() returns trigger language plpgsql as $$
    begin
      insert into scorecard_queue (tenant_id, entity_id) values (new.tenant_id, new.id);
      if new.lifecycle is distinct from old.lifecycle then
        insert into scorecard_queue (tenant_id, entity_id)
          select r.tenant_id, r.from_entity_id from entity_relations r
          where r.to_entity_id = new.id and r.type = 'depends_on';
      end if;
      perform pg_notify('scorecard_queue', '');
      return null;
    end $$;
    create trigger entities_scorecard_update after update on entities
      for each row when (${tuple('new')} is distinct from ${tuple('old')})
      execute function scorecard_enqueue_changed_entity();

    create function scorecard_enqueue_relations() returns trigger language plpgsql as $$
    begin
      insert into scorecard_queue (tenant_id, entity_id)
        select distinct tenant_id, from_entity_id from changed_rows;
      perform pg_notify('scorecard_queue', '');
      return null;
    end $$;
    create trigger entity_relations_scorecard_insert after insert on entity_relations
      referencing new table as changed_rows for each statement execute function scorecard_enqueue_relations();
    create trigger entity_relations_scorecard_delete after delete on entity_relations
      referencing old table as changed_rows for each statement execute function scorecard_enqueue_relations();

    -- A new grade reaches search: the entity's search document carries it.
    create function entity_scorecards_search_outbox() returns trigger language plpgsql as $$
    begin
      insert into search_outbox (tenant_id, collection, document_id)
        select tenant_id, 'entities', entity_id from new_rows;
      perform pg_notify('search_outbox', '');
      return null;
    end $$;
    create trigger entity_scorecards_search_insert after insert on entity_scorecards
      referencing new table as new_rows for each statement execute function entity_scorecards_search_outbox();

    create function entity_scorecard_grade_search_outbox() returns trigger language plpgsql as $$
    begin
      insert into search_outbox (tenant_id, collection, document_id) values (new.tenant_id, 'entities', new.entity_id);
      perform pg_notify('search_outbox', '');
      return null;
    end $$;
    create trigger entity_scorecards_search_update after update on entity_scorecards
      for each row when (new.grade is distinct from old.grade)
      execute function entity_scorecard_grade_search_outbox();

    -- no_open_finding_above reads an entity's open findings: a scanner's or a person's finding
    -- opened, re-rated or closed re-scores the entity. Findings the scorecards open themselves do
    -- not (the check leaves them out), or a failing rule would re-score its entity in a loop.
    create function scorecard_enqueue_findings() returns trigger language plpgsql as $$
    begin
      insert into scorecard_queue (tenant_id, entity_id)
        select distinct tenant_id, entity_id from changed_rows where source <> 'scorecard';
      perform pg_notify('scorecard_queue', '');
      return null;
    end $$;
    create trigger security_findings_scorecard_insert after insert on security_findings
      referencing new table as changed_rows for each statement execute function scorecard_enqueue_findings();
    create trigger security_findings_scorecard_update after update on security_findings
      referencing new table as changed_rows for each statement execute function scorecard_enqueue_findings();

    -- A full scoring pass walks a tenant's entities in id order, a batch at a time: a keyset range
    -- of this index, not a walk of the primary key through every tenant's rows.
    create index entities_by_id on entities (tenant_id, id);
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
  // The platform worker's drain and nightly run read and fill every tenant's queue.
  await knex.raw('grant insert, delete on scorecard_queue to shipyard_system');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index entities_by_id;
    drop trigger security_findings_scorecard_insert on security_findings;
    drop trigger security_findings_scorecard_update on security_findings;
    drop trigger entity_scorecards_search_insert on entity_scorecards;
    drop trigger entity_scorecards_search_update on entity_scorecards;
    drop trigger entity_relations_scorecard_insert on entity_relations;
    drop trigger entity_relations_scorecard_delete on entity_relations;
    drop trigger entities_scorecard_insert on entities;
    drop trigger entities_scorecard_update on entities;
    drop function scorecard_enqueue_findings();
    drop function entity_scorecard_grade_search_outbox();
    drop function entity_scorecards_search_outbox();
    drop function scorecard_enqueue_relations();
    drop function scorecard_enqueue_changed_entity();
    drop function scorecard_enqueue_entities();
    drop table scorecard_queue, scorecard_initiatives, entity_scorecards, scorecard_grading,
      scorecard_rules, scorecard_categories;
  `);
}
