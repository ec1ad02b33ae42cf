import type { Knex } from 'knex';
import type { EntityType, Lifecycle, Tier } from '../catalog/types';
import { isoTimestamp } from '../timestamps';

// Initiatives: a set of rules, a filter of entities and a target date. Progress is read from the
// entities' latest scorecards: an entity meets the initiative when each of its rules passed at
// its latest scoring (one never scored yet does not).

export interface InitiativeFilter {
  type?: EntityType;
  lifecycle?: Lifecycle;
  tier?: Tier;
  owner?: string;
}

export interface InitiativeInput {
  name: string;
  description?: string | null;
  rule_ids: string[];
  entity_filter?: InitiativeFilter;
  target_date: string;
}

export interface Initiative {
  id: string;
  name: string;
  description: string | null;
  rule_ids: string[];
  entity_filter: InitiativeFilter;
  target_date: string;
  actions_opened_at: string | null;
  created_at: string;
  updated_at: string;
}

const columns = (db: Knex) => [
  'id',
  'name',
  'description',
  'rule_ids',
  'entity_filter',
  db.raw(`to_char(target_date, 'YYYY-MM-DD') as target_date`),
  isoTimestamp(db, 'actions_opened_at', 'actions_opened_at'),
  isoTimestamp(db, 'created_at', 'created_at'),
  isoTimestamp(db, 'updated_at', 'updated_at'),
];

const row = (input: InitiativeInput) => ({
  name: input.name,
  description: input.description ?? null,
  rule_ids: input.rule_ids,
  entity_filter: JSON.stringify(input.entity_filter ?? {}),
  target_date: input.target_date,
});

export const listInitiatives = (db: Knex): Promise<Initiative[]> =>
  db('scorecard_initiatives')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(columns(db));

export const getInitiative = (db: Knex, id: string): Promise<Initiative | undefined> =>
  db('scorecard_initiatives').where({ id }).first(columns(db));

export async function insertInitiative(db: Knex, tenantId: string, input: InitiativeInput): Promise<Initiative> {
  const [created] = await db('scorecard_initiatives')
    .insert({ tenant_id: tenantId, ...row(input) })
    .returning(columns(db));
  return created as Initiative;
}

/** A new target date opens the actions again when it passes. */
export async function updateInitiative(db: Knex, id: string, input: InitiativeInput): Promise<Initiative | undefined> {
  const [updated] = await db('scorecard_initiatives')
    .where({ id })
    .update({
      ...row(input),
      actions_opened_at: db.raw('case when target_date = ?::date then actions_opened_at end', [input.target_date]),
      updated_at: db.fn.now(),
    })
    .returning(columns(db));
  return updated as Initiative | undefined;
}

export const deleteInitiative = async (db: Knex, id: string): Promise<boolean> =>
  (await db('scorecard_initiatives').where({ id }).delete()) > 0;

/** How many of `ids` are rules of the tenant. */
export const countRules = async (db: Knex, ids: string[]): Promise<number> =>
  Number((await db('scorecard_rules').whereIn('id', ids).count<{ count: string }[]>('* as count'))[0].count);

/**
 * The initiative's entities with the rules each still fails (a rule it has no result for counts
 * as failing), as a CTE body over `?` = the rule ids and the filter's values.
 */
function statusSql(filter: InitiativeFilter): { sql: string; bindings: Knex.RawBinding[] } {
  const where: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  for (const field of ['type', 'lifecycle', 'tier', 'owner'] as const) {
    if (filter[field] === undefined) continue;
    where.push(`e.${field} = ?`);
    bindings.push(filter[field]);
  }
  return {
    sql: `select e.id, e.name, e.owner, array(
        select r from unnest(?::uuid[]) r
        where not coalesce(s.rule_results @> jsonb_build_array(jsonb_build_object('rule_id', r, 'passed', true)), false)
      ) as failing
      from entities e left join entity_scorecards s on s.entity_id = e.id
      ${where.length ? `where ${where.join(' and ')}` : ''}`,
    bindings,
  };
}

export interface InitiativeProgress {
  total: number;
  passing: number;
  by_team: { owner: string | null; total: number; passing: number }[];
  entities: { entity_id: string; name: string; owner: string | null; passing: boolean; failing_rule_ids: string[] }[];
}

/** Counts per team, and a page of entities (those still failing first, then by name). */
export async function initiativeProgress(
  db: Knex,
  initiative: Pick<Initiative, 'rule_ids' | 'entity_filter'>,
  page: { limit: number; offset: number },
): Promise<InitiativeProgress> {
  const status = statusSql(initiative.entity_filter);
  const bindings = [initiative.rule_ids, ...status.bindings];
  const [teams, entities] = await Promise.all([
    db.raw<{ rows: { owner: string | null; total: number; passing: number }[] }>(
      `with status as (${status.sql})
       select owner, count(*)::int as total, (count(*) filter (where cardinality(failing) = 0))::int as passing
       from status group by owner order by owner nulls last`,
      bindings,
    ),
    db.raw<{ rows: { entity_id: string; name: string; owner: string | null; failing_rule_ids: string[] }[] }>(
      `with status as (${status.sql})
       select id as entity_id, name, owner, failing as failing_rule_ids from status
       order by cardinality(failing) = 0, name, id limit ? offset ?`,
      [...bindings, page.limit, page.offset],
    ),
  ]);
  const by_team = teams.rows;
  return {
    total: by_team.reduce((sum, team) => sum + team.total, 0),
    passing: by_team.reduce((sum, team) => sum + team.passing, 0),
    by_team,
    entities: entities.rows.map((entity) => ({ ...entity, passing: entity.failing_rule_ids.length === 0 })),
  };
}

/** Every entity of the initiative still failing one of its rules, with its owner. */
export async function failingEntities(
  db: Knex,
  initiative: Pick<Initiative, 'rule_ids' | 'entity_filter'>,
): Promise<{ id: string; owner: string | null; failing: string[] }[]> {
  const status = statusSql(initiative.entity_filter);
  const { rows } = await db.raw<{ rows: { id: string; owner: string | null; failing: string[] }[] }>(
    `with status as (${status.sql}) select id, owner, failing from status where cardinality(failing) > 0 order by id`,
    [initiative.rule_ids, ...status.bindings],
  );
  return rows;
}

/** Tenants with an initiative past its target date whose actions are not opened yet (the system role). */
export async function tenantsWithDueInitiatives(system: Knex): Promise<string[]> {
  const { rows } = await system.raw<{ rows: { tenant_id: string }[] }>(
    `select distinct tenant_id from scorecard_initiatives where target_date < current_date and actions_opened_at is null`,
  );
  return rows.map((r) => r.tenant_id);
}

export const dueInitiatives = (db: Knex): Promise<Initiative[]> =>
  db('scorecard_initiatives').whereRaw('target_date < current_date').whereNull('actions_opened_at').select(columns(db));

export const markActionsOpened = (db: Knex, id: string) =>
  db('scorecard_initiatives').where({ id }).update({ actions_opened_at: db.fn.now() });
