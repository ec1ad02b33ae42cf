import type { Knex } from 'knex';
import { isoTimestamp } from '../timestamps';
import type { Check } from './checks';
import { DEFAULT_CATEGORIES, DEFAULT_GRADING } from './defaults';
import type { ScoredCategory, ScoredRule } from './scoringRules';
import type { FindingSeverity, GradingThresholds } from './types';

// A tenant's scorecard configuration: categories, rules, grading. Every query runs in a tenant
// transaction (RLS); writers pass the tenant id for the rows they insert.

export interface CategoryInput {
  name: string;
  description?: string | null;
  weight: number;
}

export interface Category {
  id: string;
  name: string;
  description: string | null;
  weight: number;
  created_at: string;
  updated_at: string;
}

export interface RuleInput {
  name: string;
  description?: string | null;
  category_id: string;
  weight: number;
  severity?: FindingSeverity | null;
  finding_type?: string | null;
  check: Check;
}

/** A rule as the API receives it: its check validated by the check schema, not yet typed. */
export type RuleBody = Omit<RuleInput, 'check'> & { check: unknown };

export interface Rule {
  id: string;
  name: string;
  description: string | null;
  category_id: string;
  weight: number;
  severity: FindingSeverity | null;
  finding_type: string | null;
  check: Check;
  created_at: string;
  updated_at: string;
}

export interface Grading extends GradingThresholds {
  updated_at: string;
}

const categoryColumns = (db: Knex) => [
  'id',
  'name',
  'description',
  db.raw('weight::float8 as weight'),
  isoTimestamp(db, 'created_at', 'created_at'),
  isoTimestamp(db, 'updated_at', 'updated_at'),
];

const ruleColumns = (db: Knex) => [
  'id',
  'name',
  'description',
  'category_id',
  db.raw('weight::float8 as weight'),
  'severity',
  'finding_type',
  'check',
  isoTimestamp(db, 'created_at', 'created_at'),
  isoTimestamp(db, 'updated_at', 'updated_at'),
];

const gradingColumns = (db: Knex) => [
  db.raw('a_plus::float8 as a_plus, a::float8 as a, b::float8 as b, c::float8 as c, d::float8 as d'),
  isoTimestamp(db, 'updated_at', 'updated_at'),
];

/**
 * Seeds the default set the first time a tenant's scorecards are used. The grading row is the
 * marker: inserting it is the one race-free step (a concurrent seed waits on its key, then finds
 * it), and a tenant that deleted every default category is not seeded again.
 */
export async function ensureDefaults(trx: Knex, tenantId: string): Promise<void> {
  const seeded = await trx('scorecard_grading')
    .insert({ tenant_id: tenantId, ...DEFAULT_GRADING })
    .onConflict('tenant_id')
    .ignore()
    .returning('tenant_id');
  if (seeded.length === 0) return;
  const categories: { id: string; name: string }[] = await trx('scorecard_categories')
    .insert(
      DEFAULT_CATEGORIES.map(({ name, description, weight }) => ({ tenant_id: tenantId, name, description, weight })),
    )
    .returning(['id', 'name']);
  const idOf = new Map(categories.map((category) => [category.name, category.id]));
  await trx('scorecard_rules').insert(
    DEFAULT_CATEGORIES.flatMap((category) =>
      category.rules.map((rule) => ({
        tenant_id: tenantId,
        category_id: idOf.get(category.name),
        name: rule.name,
        weight: rule.weight,
        severity: rule.severity ?? null,
        finding_type: rule.finding_type ?? null,
        check: JSON.stringify(rule.check),
      })),
    ),
  );
}

export const listCategories = (db: Knex): Promise<Category[]> =>
  db('scorecard_categories')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(categoryColumns(db));

export const getCategory = (db: Knex, id: string): Promise<Category | undefined> =>
  db('scorecard_categories').where({ id }).first(categoryColumns(db));

export const countRows = async (db: Knex, table: string): Promise<number> =>
  Number((await db(table).count<{ count: string }[]>('* as count'))[0].count);

export async function insertCategory(db: Knex, tenantId: string, input: CategoryInput): Promise<Category> {
  const [row] = await db('scorecard_categories')
    .insert({ tenant_id: tenantId, name: input.name, description: input.description ?? null, weight: input.weight })
    .returning(categoryColumns(db));
  return row as Category;
}

export async function updateCategory(db: Knex, id: string, input: CategoryInput): Promise<Category | undefined> {
  const [row] = await db('scorecard_categories')
    .where({ id })
    .update({ name: input.name, description: input.description ?? null, weight: input.weight, updated_at: db.fn.now() })
    .returning(categoryColumns(db));
  return row as Category | undefined;
}

export const categoryHasRules = async (db: Knex, id: string): Promise<boolean> =>
  (await db('scorecard_rules').where({ category_id: id }).first('id')) !== undefined;

export const deleteCategory = async (db: Knex, id: string): Promise<boolean> =>
  (await db('scorecard_categories').where({ id }).delete()) > 0;

export const listRules = (db: Knex): Promise<Rule[]> =>
  db('scorecard_rules')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(ruleColumns(db));

export const getRule = (db: Knex, id: string): Promise<Rule | undefined> =>
  db('scorecard_rules').where({ id }).first(ruleColumns(db));

const ruleRow = (input: RuleInput) => ({
  name: input.name,
  description: input.description ?? null,
  category_id: input.category_id,
  weight: input.weight,
  severity: input.severity ?? null,
  finding_type: input.finding_type ?? null,
  check: JSON.stringify(input.check),
});

export async function insertRule(db: Knex, tenantId: string, input: RuleInput): Promise<Rule> {
  const [row] = await db('scorecard_rules')
    .insert({ tenant_id: tenantId, ...ruleRow(input) })
    .returning(ruleColumns(db));
  return row as Rule;
}

export async function updateRule(db: Knex, id: string, input: RuleInput): Promise<Rule | undefined> {
  const [row] = await db('scorecard_rules')
    .where({ id })
    .update({ ...ruleRow(input), updated_at: db.fn.now() })
    .returning(ruleColumns(db));
  return row as Rule | undefined;
}

export const deleteRule = async (db: Knex, id: string): Promise<boolean> =>
  (await db('scorecard_rules').where({ id }).delete()) > 0;

export const getGrading = async (db: Knex): Promise<Grading> =>
  (await db('scorecard_grading').first(gradingColumns(db))) as Grading;

export async function putGrading(db: Knex, thresholds: GradingThresholds): Promise<Grading> {
  const [row] = await db('scorecard_grading')
    .update({ ...thresholds, updated_at: db.fn.now() })
    .returning(gradingColumns(db));
  return row as Grading;
}

/** What scoring needs of the configuration, in one round trip per table. */
export async function loadScoringConfig(db: Knex): Promise<{
  categories: ScoredCategory[];
  rules: (ScoredRule & Pick<Rule, 'severity' | 'finding_type' | 'updated_at'>)[];
  grading: GradingThresholds;
}> {
  const [categories, rules, grading] = await Promise.all([listCategories(db), listRules(db), getGrading(db)]);
  return { categories, rules, grading };
}
