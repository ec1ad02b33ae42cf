import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { invalid, notFound } from '../errors';
import {
  countRules,
  deleteInitiative,
  dueInitiatives,
  failingEntities,
  markActionsOpened,
  getInitiative,
  initiativeProgress,
  insertInitiative,
  updateInitiative,
  type InitiativeInput,
} from './initiativeStore';
import { countRows } from './configStore';
import { owningTeam } from '../catalog/ownerStore';
import { createAction } from '../governance/actionCommands';

// Initiatives' changes (audited), their progress read, and the governance actions opened past
// their target date.

const ACTION_TITLE_MAX = 200;

async function checkInput(db: Knex, input: InitiativeInput): Promise<InitiativeInput> {
  const ruleIds = [...new Set(input.rule_ids)];
  if ((await countRules(db, ruleIds)) !== ruleIds.length)
    throw invalid('Unknown rule', [{ field: 'rule_ids', message: 'must name rules of this tenant' }]);
  return { ...input, rule_ids: ruleIds };
}

export async function createInitiative(db: Knex, auth: CallerPrincipal, body: InitiativeInput, maxInitiatives: number) {
  if ((await countRows(db, 'scorecard_initiatives')) >= maxInitiatives)
    throw invalid(`A tenant may have at most ${maxInitiatives} initiatives (SHIPYARD_SCORECARD_MAX_INITIATIVES)`);
  const initiative = await insertInitiative(db, auth.tenantId, await checkInput(db, body));
  await recordAudit(db, auth, {
    eventType: 'scorecard.initiative.created',
    action: 'create',
    targetType: 'scorecard_initiative',
    targetId: initiative.id,
    metadata: { name: initiative.name, target_date: initiative.target_date },
  });
  return initiative;
}

export async function replaceInitiative(db: Knex, auth: CallerPrincipal, id: string, body: InitiativeInput) {
  if (!(await getInitiative(db, id))) throw notFound('Initiative');
  const initiative = await updateInitiative(db, id, await checkInput(db, body));
  if (!initiative) throw notFound('Initiative');
  await recordAudit(db, auth, {
    eventType: 'scorecard.initiative.updated',
    action: 'update',
    targetType: 'scorecard_initiative',
    targetId: id,
    metadata: { name: initiative.name, target_date: initiative.target_date },
  });
  return initiative;
}

export async function removeInitiative(db: Knex, auth: CallerPrincipal, id: string): Promise<void> {
  if (!(await deleteInitiative(db, id))) throw notFound('Initiative');
  await recordAudit(db, auth, {
    eventType: 'scorecard.initiative.deleted',
    action: 'delete',
    targetType: 'scorecard_initiative',
    targetId: id,
  });
}

/** The initiative with its progress: counts overall and per team, and a page of its entities. */
export async function readInitiative(db: Knex, id: string, page: { limit: number; offset: number }) {
  const initiative = await getInitiative(db, id);
  if (!initiative) throw notFound('Initiative');
  return { ...initiative, progress: await initiativeProgress(db, initiative, page) };
}

/**
 * Past an initiative's target date, each of its entities still failing one of its rules gets
 * one governance action for its owning team (`source_type: initiative`, deduplicated by gov per
 * initiative and entity), and the initiative is marked so the next daily run skips it. Returns
 * the initiatives handled and the actions opened.
 */
export async function openDueInitiativeActions(
  db: Knex,
  tenantId: string,
): Promise<{ initiatives: number; actions: number }> {
  const actor = { kind: 'system' as const, tenantId, name: 'initiatives' };
  const due = await dueInitiatives(db);
  let actions = 0;
  for (const initiative of due) {
    for (const entity of await failingEntities(db, initiative)) {
      const { created } = await createAction(db, actor, {
        title: `Initiative past its target date: ${initiative.name}`.slice(0, ACTION_TITLE_MAX),
        type: 'initiative',
        priority: 'medium',
        description: `Rules still failing: ${entity.failing.length} of ${initiative.rule_ids.length} (target ${initiative.target_date})`,
        entity_id: entity.id,
        assigned_to: (await owningTeam(db, entity.owner)) ?? undefined,
        source_type: 'initiative',
        source_id: initiative.id,
      });
      if (created) actions++;
    }
    await markActionsOpened(db, initiative.id);
  }
  return { initiatives: due.length, actions };
}
