import type { Knex } from 'knex';
import { auditAs, actorName, type Actor } from '../audit/actor';
import { RefusedAction, type AuditEvent } from '../audit/store';
import { invalid, notFound } from '../errors';
import { notifyActionAssigned } from '../notifications/commands';
import { recordEvent } from '../webhooks/events';
import { actionMoveRefusal } from './actionRules';
import {
  actionOfSource,
  bulkSetStatus,
  getAction,
  insertAction,
  lockAction,
  softDeleteAction,
  updateAction,
} from './actionStore';
import type { ActionInput, ActionStatus, ActionUpdate, GovernanceAction } from './types';

// The governance actions' changes, each audited in the same transaction. An action's audit
// entry targets its entity when it has one, so it shows in the entity's /activity; else the action.

/** An audit entry about an action: against its entity when it has one, else against the action. */
const actionEvent = (
  actionId: string,
  entityId: string | null,
  event: Pick<AuditEvent, 'eventType' | 'action'> & { metadata?: Record<string, unknown> },
): AuditEvent => ({
  ...event,
  ...(entityId === null
    ? { targetType: 'governance_action', targetId: actionId }
    : { targetType: 'entity', targetId: entityId }),
  metadata: { action_id: actionId, ...event.metadata },
});

/**
 * The entity a governance action or a finding names (`body.entity_id`) must exist in the tenant;
 * its row is share-locked so a concurrent delete waits for this transaction (the foreign key
 * would otherwise fail the insert). Its owner, for whom the work is.
 */
export async function requireEntity(trx: Knex, entityId: string): Promise<{ owner: string | null }> {
  const entity = await trx('entities').where({ id: entityId }).forShare().first('owner');
  if (!entity) throw invalid('No such entity', [{ field: 'body.entity_id', message: 'names no entity of the tenant' }]);
  return entity;
}

/**
 * Opens an action. One opened by the platform (any source but `manual`) is opened once per
 * source and entity: a repeat returns the existing action (even a deleted one's id is kept, so
 * `action` is then undefined) with `created` false.
 */
export async function createAction(
  trx: Knex,
  actor: Actor,
  input: ActionInput,
): Promise<{ action: GovernanceAction | undefined; created: boolean }> {
  const entityId = input.entity_id ?? null;
  if (entityId !== null) await requireEntity(trx, entityId);
  const row = {
    tenant_id: actor.tenantId,
    title: input.title,
    description: input.description ?? null,
    type: input.type,
    priority: input.priority,
    entity_id: entityId,
    assigned_to: input.assigned_to ?? null,
    created_by: actorName(actor),
    due_date: input.due_date ?? null,
    source_type: input.source_type ?? 'manual',
    source_id: input.source_id ?? null,
  };
  const id = await insertAction(trx, row);
  if (id === undefined) {
    const existing = await actionOfSource(trx, row);
    return { action: existing === undefined ? undefined : await getAction(trx, existing), created: false };
  }
  await auditAs(
    trx,
    actor,
    actionEvent(id, entityId, {
      eventType: 'governance_action.created',
      action: 'create',
      metadata: { title: row.title, priority: row.priority, source_type: row.source_type, source_id: row.source_id },
    }),
  );
  if (row.assigned_to !== null) {
    await notifyActionAssigned(
      trx,
      actor.tenantId,
      { id, title: row.title, assigned_to: row.assigned_to },
      row.created_by,
    );
  }
  const action = await getAction(trx, id);
  await recordEvent(trx, actor.tenantId, 'governance.action.created', { action });
  return { action, created: true };
}

/** A PATCH: the fields given, a status move only as actionMoveRefusal allows; 404 when deleted or unknown. */
export async function changeAction(
  trx: Knex,
  actor: Actor,
  id: string,
  update: ActionUpdate,
): Promise<GovernanceAction> {
  const before = await lockAction(trx, id);
  if (!before) throw notFound('Governance action');
  const fields = Object.keys(update);
  const event = actionEvent(id, before.entity_id, {
    eventType: 'governance_action.updated',
    action: 'update',
    metadata: {
      fields,
      ...(update.status !== undefined && { old_status: before.status, new_status: update.status }),
    },
  });
  const refusal = update.status === undefined ? undefined : actionMoveRefusal(before.status, update.status);
  // The router records a refused move as a failure entry once this transaction has rolled back.
  if (refusal) throw new RefusedAction(refusal, event);
  if (fields.length > 0) {
    await updateAction(trx, id, update);
    await auditAs(trx, actor, event);
  }
  const { assigned_to: assignee } = update;
  if (assignee && assignee !== before.assigned_to) {
    await notifyActionAssigned(
      trx,
      actor.tenantId,
      { id, title: before.title, assigned_to: assignee },
      actorName(actor),
    );
  }
  return (await getAction(trx, id))!;
}

/** A soft delete: the action leaves every read and list; a second delete is a 404. */
export async function deleteAction(trx: Knex, actor: Actor, id: string): Promise<void> {
  const deleted = await softDeleteAction(trx, id);
  if (!deleted) throw notFound('Governance action');
  await auditAs(
    trx,
    actor,
    actionEvent(id, deleted.entity_id, { eventType: 'governance_action.deleted', action: 'delete' }),
  );
}

/**
 * Sets `status` on each listed action that is live, not final and not already in it; ids of
 * other tenants' or deleted actions are skipped like unknown ones.
 */
export async function bulkUpdateStatus(
  trx: Knex,
  actor: Actor,
  ids: string[],
  status: ActionStatus,
): Promise<{ requested: number; updated: number }> {
  const changed = await bulkSetStatus(trx, ids, status);
  // One entry per action, so each shows in its entity's activity; sent together (one round trip
  // on the pipelined connection).
  await Promise.all(
    changed.map((row) =>
      auditAs(
        trx,
        actor,
        actionEvent(row.id, row.entity_id, {
          eventType: 'governance_action.updated',
          action: 'bulk_update',
          metadata: { fields: ['status'], old_status: row.previous, new_status: status },
        }),
      ),
    ),
  );
  return { requested: ids.length, updated: changed.length };
}
