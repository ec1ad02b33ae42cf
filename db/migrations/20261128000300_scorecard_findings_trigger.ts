import type { Knex } from 'knex';

// no_open_finding_above reads an entity's open findings: a scanner's or a person's finding
// opened, re-rated or closed re-scores the entity. Findings the scorecards open themselves do
// not (the check leaves them out), or a failing rule would re-score its entity in a loop.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
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
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger security_findings_scorecard_insert on security_findings;
    drop trigger security_findings_scorecard_update on security_findings;
    drop function scorecard_enqueue_findings();
  `);
}
