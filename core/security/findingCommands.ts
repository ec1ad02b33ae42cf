import type { Knex } from 'knex';
import { auditAs, type Actor } from '../audit/actor';
import { RefusedAction, type AuditEvent } from '../audit/store';
import { recordEvent } from '../webhooks/events';
import { owningTeam } from '../catalog/ownerStore';
import { notFound } from '../errors';
import { createAction, requireEntity } from '../governance/actionCommands';
import { defaultFingerprint, findingMoveRefusal } from './findingRules';
import { getFinding, lockFinding, resolveOpenFindings, setFindingStatus, upsertFinding } from './findingStore';
import type { FindingInput, FindingSource, FindingStatus, SecurityFinding } from './types';

// The security findings' changes, made by callers (POST and PATCH /security/findings) and by
// scorecard evaluation, each audited in the same transaction against the finding's entity, so it
// shows in the entity's /activity.

const ACTION_TITLE_MAX = 200;

/** An audit entry about a finding, against its entity. */
const findingEvent = (
  entityId: string,
  findingId: string,
  event: { eventType: string; action: string; metadata?: Record<string, unknown> },
): AuditEvent => ({
  ...event,
  targetType: 'entity',
  targetId: entityId,
  metadata: { finding_id: findingId, ...event.metadata },
});

/**
 * Records a reported finding: opens it, or refreshes the one of the same entity, type and
 * fingerprint (findingStore.upsertFinding says which fields, and that a resolved finding
 * reopens). While a critical finding is open, the entity's owning team has one governance action
 * for it (`source_type: finding`), opened once per finding whatever happens to it afterwards.
 */
export async function recordFinding(
  trx: Knex,
  actor: Actor,
  input: FindingInput,
): Promise<{ finding: SecurityFinding; opened: boolean; reopened: boolean }> {
  const { owner } = await requireEntity(trx, input.entity_id);
  const result = await upsertFinding(trx, {
    tenant_id: actor.tenantId,
    entity_id: input.entity_id,
    type: input.type,
    severity: input.severity,
    title: input.title,
    description: input.description ?? null,
    remediation: input.remediation ?? null,
    source: input.source,
    fingerprint: input.fingerprint ?? defaultFingerprint(input.type, input.title),
  });
  const reopened = result.previous_status === 'resolved';
  if (result.inserted || reopened) {
    await auditAs(
      trx,
      actor,
      findingEvent(input.entity_id, result.id, {
        eventType: result.inserted ? 'security_finding.opened' : 'security_finding.reopened',
        action: result.inserted ? 'open' : 'reopen',
        metadata: { type: input.type, severity: input.severity, source: input.source },
      }),
    );
  }
  if (input.severity === 'critical' && result.status === 'open') {
    await createAction(trx, actor, {
      title: `Critical finding: ${input.title}`.slice(0, ACTION_TITLE_MAX),
      type: 'security_finding',
      priority: 'critical',
      description: input.remediation ?? input.description,
      entity_id: input.entity_id,
      assigned_to: (await owningTeam(trx, owner)) ?? undefined,
      source_type: 'finding',
      source_id: result.id,
    });
  }
  const finding = (await getFinding(trx, result.id))!;
  if (result.inserted || reopened)
    await recordEvent(trx, actor.tenantId, 'security.finding.opened', { finding, reopened });
  return { finding, opened: result.inserted, reopened };
}

/**
 * Resolves the entity's open and acknowledged findings of `source` whose fingerprint is listed
 * (a scorecard rule that passes again: fingerprint = the rule id). Returns the findings resolved.
 */
export async function resolveFindings(
  trx: Knex,
  actor: Actor,
  criteria: { entityId: string; source: FindingSource; fingerprints: string[] },
): Promise<{ id: string; type: string; fingerprint: string }[]> {
  const resolved = await resolveOpenFindings(trx, criteria);
  await Promise.all(
    resolved.map((finding) =>
      auditAs(
        trx,
        actor,
        findingEvent(criteria.entityId, finding.id, {
          eventType: 'security_finding.status_changed',
          action: 'resolved',
          metadata: { type: finding.type, old_status: finding.previous, new_status: 'resolved' },
        }),
      ),
    ),
  );
  return resolved.map(({ id, type, fingerprint }) => ({ id, type, fingerprint }));
}

/** A status move (findingRules.FINDING_MOVES; 409 otherwise); asking for the current status changes nothing. */
export async function changeFindingStatus(
  trx: Knex,
  actor: Actor,
  id: string,
  status: FindingStatus,
): Promise<SecurityFinding> {
  const before = await lockFinding(trx, id);
  if (!before) throw notFound('Security finding');
  const event = findingEvent(before.entity_id, id, {
    eventType: 'security_finding.status_changed',
    action: status === 'open' ? 'reopen' : status,
    metadata: { old_status: before.status, new_status: status },
  });
  const refusal = findingMoveRefusal(before.status, status);
  // The router records a refused move as a failure entry once this transaction has rolled back.
  if (refusal) throw new RefusedAction(refusal, event);
  if (before.status !== status) {
    await setFindingStatus(trx, id, status);
    await auditAs(trx, actor, event);
  }
  return (await getFinding(trx, id))!;
}
