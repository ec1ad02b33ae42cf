import type { Knex } from 'knex';
import { recordAudit, RefusedAction, type AuditEvent } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { conflict, invalid, notFound } from '../errors';
import { isUniqueViolation } from '../roles/store';
import {
  categoryHasRules,
  countRows,
  deleteCategory,
  deleteRule,
  ensureDefaults,
  getCategory,
  getGrading,
  getRule,
  insertCategory,
  insertRule,
  listCategories,
  listRules,
  putGrading,
  updateCategory,
  updateRule,
  type CategoryInput,
  type RuleBody,
  type RuleInput,
} from './configStore';
import { toCheck } from './checks';
import { requestFullRescore } from './queueStore';
import { assertThresholds } from './scoringRules';
import type { GradingThresholds } from './types';

// Changes to a tenant's scorecard configuration: each is audited and, in the same transaction,
// asks for every entity of the tenant to be scored again (the platform worker does it).

export interface ScorecardLimits {
  maxCategories: number;
  maxRules: number;
}

/** Reads seed the default set too, so a new tenant's first look shows what scores its entities. */
export async function readCategories(db: Knex, auth: CallerPrincipal) {
  await ensureDefaults(db, auth.tenantId);
  return listCategories(db);
}

export async function readRules(db: Knex, auth: CallerPrincipal) {
  await ensureDefaults(db, auth.tenantId);
  return listRules(db);
}

export async function readGrading(db: Knex, auth: CallerPrincipal) {
  await ensureDefaults(db, auth.tenantId);
  return getGrading(db);
}

async function changed(db: Knex, auth: CallerPrincipal, event: AuditEvent): Promise<void> {
  await recordAudit(db, auth, event);
  await requestFullRescore(db, auth.tenantId);
}

const nameTaken = (what: string, name: string) => conflict(`A scorecard ${what} named "${name}" already exists`);

/** A duplicate name (checked first, and again by the unique key for a concurrent request) is a 409. */
async function withFreeName<T>(what: string, name: string, event: AuditEvent, write: () => Promise<T>): Promise<T> {
  return write().catch((err: unknown) => {
    throw isUniqueViolation(err) ? new RefusedAction(nameTaken(what, name), event) : err;
  });
}

async function nameInUse(db: Knex, table: string, name: string, exceptId?: string): Promise<boolean> {
  const query = db(table).where({ name });
  if (exceptId) query.whereNot({ id: exceptId });
  return (await query.first('id')) !== undefined;
}

export async function createCategory(db: Knex, auth: CallerPrincipal, input: CategoryInput, limits: ScorecardLimits) {
  await ensureDefaults(db, auth.tenantId);
  const event = { eventType: 'scorecard.category.created', action: 'create', targetType: 'scorecard_category' };
  if ((await countRows(db, 'scorecard_categories')) >= limits.maxCategories)
    throw new RefusedAction(
      invalid(
        `A tenant may have at most ${limits.maxCategories} scorecard categories (SHIPYARD_SCORECARD_MAX_CATEGORIES)`,
      ),
      event,
    );
  if (await nameInUse(db, 'scorecard_categories', input.name))
    throw new RefusedAction(nameTaken('category', input.name), event);
  const category = await withFreeName('category', input.name, event, () => insertCategory(db, auth.tenantId, input));
  await changed(db, auth, { ...event, targetId: category.id, metadata: { name: category.name } });
  return category;
}

export async function replaceCategory(db: Knex, auth: CallerPrincipal, id: string, input: CategoryInput) {
  await ensureDefaults(db, auth.tenantId);
  const event = {
    eventType: 'scorecard.category.updated',
    action: 'update',
    targetType: 'scorecard_category',
    targetId: id,
  };
  if (!(await getCategory(db, id))) throw notFound('Scorecard category');
  if (await nameInUse(db, 'scorecard_categories', input.name, id))
    throw new RefusedAction(nameTaken('category', input.name), event);
  const category = await withFreeName('category', input.name, event, () => updateCategory(db, id, input));
  if (!category) throw notFound('Scorecard category');
  await changed(db, auth, { ...event, metadata: { name: category.name } });
  return category;
}

/** A category that still has rules is kept (409): its rules must be moved or deleted first. */
export async function removeCategory(db: Knex, auth: CallerPrincipal, id: string): Promise<void> {
  const event = {
    eventType: 'scorecard.category.deleted',
    action: 'delete',
    targetType: 'scorecard_category',
    targetId: id,
  };
  if (!(await getCategory(db, id))) throw notFound('Scorecard category');
  if (await categoryHasRules(db, id))
    throw new RefusedAction(conflict('The category still has rules: delete or move them first'), event);
  if (!(await deleteCategory(db, id))) throw notFound('Scorecard category');
  await changed(db, auth, event);
}

async function checkRule(db: Knex, body: RuleBody): Promise<RuleInput> {
  const input = { ...body, check: toCheck(body.check) };
  if (input.severity && !input.finding_type)
    throw invalid('A rule with a severity needs a finding_type', [
      { field: 'finding_type', message: 'is required when severity is set' },
    ]);
  if (!(await getCategory(db, input.category_id)))
    throw invalid('No such scorecard category', [
      { field: 'category_id', message: 'names no category of this tenant' },
    ]);
  return input;
}

export async function createRule(db: Knex, auth: CallerPrincipal, body: RuleBody, limits: ScorecardLimits) {
  await ensureDefaults(db, auth.tenantId);
  const event = { eventType: 'scorecard.rule.created', action: 'create', targetType: 'scorecard_rule' };
  const input = await checkRule(db, body);
  if ((await countRows(db, 'scorecard_rules')) >= limits.maxRules)
    throw new RefusedAction(
      invalid(`A tenant may have at most ${limits.maxRules} scorecard rules (SHIPYARD_SCORECARD_MAX_RULES)`),
      event,
    );
  if (await nameInUse(db, 'scorecard_rules', input.name)) throw new RefusedAction(nameTaken('rule', input.name), event);
  const rule = await withFreeName('rule', input.name, event, () => insertRule(db, auth.tenantId, input));
  await changed(db, auth, { ...event, targetId: rule.id, metadata: { name: rule.name, check: rule.check } });
  return rule;
}

export async function replaceRule(db: Knex, auth: CallerPrincipal, id: string, body: RuleBody) {
  await ensureDefaults(db, auth.tenantId);
  const event = { eventType: 'scorecard.rule.updated', action: 'update', targetType: 'scorecard_rule', targetId: id };
  if (!(await getRule(db, id))) throw notFound('Scorecard rule');
  const input = await checkRule(db, body);
  if (await nameInUse(db, 'scorecard_rules', input.name, id))
    throw new RefusedAction(nameTaken('rule', input.name), event);
  const rule = await withFreeName('rule', input.name, event, () => updateRule(db, id, input));
  if (!rule) throw notFound('Scorecard rule');
  await changed(db, auth, { ...event, metadata: { name: rule.name, check: rule.check } });
  return rule;
}

export async function removeRule(db: Knex, auth: CallerPrincipal, id: string): Promise<void> {
  if (!(await deleteRule(db, id))) throw notFound('Scorecard rule');
  await changed(db, auth, {
    eventType: 'scorecard.rule.deleted',
    action: 'delete',
    targetType: 'scorecard_rule',
    targetId: id,
  });
}

export async function replaceGrading(db: Knex, auth: CallerPrincipal, thresholds: GradingThresholds) {
  assertThresholds(thresholds);
  await ensureDefaults(db, auth.tenantId);
  const grading = await putGrading(db, thresholds);
  await changed(db, auth, {
    eventType: 'scorecard.grading.updated',
    action: 'update',
    targetType: 'scorecard_grading',
    metadata: { ...thresholds },
  });
  return grading;
}
