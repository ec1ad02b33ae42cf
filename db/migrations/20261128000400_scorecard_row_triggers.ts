import type { Knex } from 'knex';

// The update triggers of 20261128000100 joined a statement's old and new transition tables to
// find the rows whose watched columns changed; the planner cannot index nor estimate those
// tables, and a bulk update of n rows met an n² nested loop (a 2,000-row re-score took seconds).
// Row triggers with a WHEN condition fire, in C, for the changed rows alone, with no join.
const ENTITY_FIELDS = ['owner', 'description', 'tier', 'tags', 'links', 'lifecycle', 'readme', 'type'];
const tuple = (alias: string) => `(${ENTITY_FIELDS.map((field) => `${alias}.${field}`).join(', ')})`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger entities_scorecard_update on entities;
    drop trigger entity_scorecards_search_update on entity_scorecards;

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

    create function entity_scorecard_grade_search_outbox() returns trigger language plpgsql as $$
    begin
      insert into search_outbox (tenant_id, collection, document_id) values (new.tenant_id, 'entities', new.entity_id);
      perform pg_notify('search_outbox', '');
      return null;
    end $$;
    create trigger entity_scorecards_search_update after update on entity_scorecards
      for each row when (new.grade is distinct from old.grade)
      execute function entity_scorecard_grade_search_outbox();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger entities_scorecard_update on entities;
    drop trigger entity_scorecards_search_update on entity_scorecards;
    drop function scorecard_enqueue_changed_entity();
    drop function entity_scorecard_grade_search_outbox();
    create trigger entities_scorecard_update after update on entities
      referencing new table as new_rows old table as old_rows
      for each statement execute function scorecard_enqueue_entities();
    create trigger entity_scorecards_search_update after update on entity_scorecards
      referencing new table as new_rows old table as old_rows
      for each statement execute function entity_scorecards_search_outbox();
  `);
}
