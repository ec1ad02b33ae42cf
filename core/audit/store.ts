import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import type { Principal } from '../auth/principal';
import { ApiError } from '../errors';
import type { ActorType, AuditStatus } from './types';
import { toIso } from '../timestamps';
import { statement } from '../../db/statements';

export interface AuditEvent {
  /** e.g. role.assigned, api_key.created, team.updated */
  eventType: string;
  action: string;
  status?: AuditStatus;
  errorMessage?: string;
  targetType?: string;
  targetId?: string;
  metadata?: Record<string, unknown>;
}

/** How a principal appears in the audit log. */
export function actorOf(principal: Principal): { actor: string; actor_type: ActorType } {
  switch (principal.kind) {
    case 'user':
      return { actor: principal.email, actor_type: 'user' };
    case 'api_key':
      return { actor: `api-key:${principal.apiKeyId}`, actor_type: 'api_key' };
    case 'agent':
      return { actor: `agent:${principal.clusterId}`, actor_type: 'agent' };
  }
}

/** Writes an audit entry in the request's transaction: it commits or rolls back with the change. */
export async function recordAudit(trx: Knex, principal: Principal, event: AuditEvent): Promise<void> {
  await insertAudit(trx, principal.tenantId, actorOf(principal), event);
}

/** An entry no caller made (a scheduled job): `actor` names the job. */
export async function recordSystemAudit(trx: Knex, tenantId: string, actor: string, event: AuditEvent): Promise<void> {
  await insertAudit(trx, tenantId, { actor, actor_type: 'system' }, event);
}

async function insertAudit(
  trx: Knex,
  tenantId: string,
  actor: { actor: string; actor_type: ActorType },
  event: AuditEvent,
): Promise<void> {
  await trx('audit_log').insert({
    tenant_id: tenantId,
    ...actor,
    event_type: event.eventType,
    action: event.action,
    status: event.status ?? 'success',
    error_message: event.errorMessage ?? null,
    target_type: event.targetType ?? null,
    target_id: event.targetId ?? null,
    metadata: event.metadata ?? {},
  });
}

/**
 * An audited action refused by a business rule (a limit, a cycle, a duplicate): the error the
 * caller gets, carrying the audit entry of the attempt. The router records it as a failure.
 */
export class RefusedAction extends ApiError {
  constructor(
    error: ApiError,
    readonly event: Omit<AuditEvent, 'status' | 'errorMessage'>,
  ) {
    super(error.code, error.message, error.details, error.headers);
  }
}

/**
 * Records a refused action as a `failure` entry with the error's message. Called once the
 * request's transaction has rolled back, in a transaction of its own, so the entry survives
 * the rollback (and the request holds no second connection meanwhile).
 */
export function recordRefusal(db: Knex, principal: Principal, refusal: RefusedAction): Promise<void> {
  return withTenant(db, principal.tenantId, (trx) =>
    recordAudit(trx, principal, { ...refusal.event, status: 'failure', errorMessage: refusal.message }),
  );
}

export interface ActivityItem {
  eventType: string;
  actor: string;
  actorType: ActorType;
  action: string;
  status: AuditStatus;
  errorMessage: string | null;
  /** What the action was on, e.g. `team` and its id; null for tenant-wide events. */
  targetType: string | null;
  targetId: string | null;
  createdAt: string;
}

interface AuditRow {
  event_type: string;
  actor: string;
  actor_type: ActorType;
  action: string;
  status: AuditStatus;
  error_message: string | null;
  target_type: string | null;
  target_id: string | null;
  created_at: Date;
}

/** The newest entries, of one target or (`all`) of every one. */
const recentEntries = statement<AuditRow, { limit: number; type?: string; id?: string }, 'target' | 'all'>(
  (q, { limit, type, id }, of) =>
    q('audit_log')
      .modify((query) => {
        if (of === 'target') query.where({ target_type: type, target_id: id });
      })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .select(
        'event_type',
        'actor',
        'actor_type',
        'action',
        'status',
        'error_message',
        'target_type',
        'target_id',
        'created_at',
      ),
);

/** Newest first. */
export async function recentActivity(
  trx: Knex,
  limit: number,
  target?: { type: string; id: string },
): Promise<ActivityItem[]> {
  const rows = await recentEntries.rows(trx, { limit, ...target }, target ? 'target' : 'all');
  return rows.map((row) => ({
    eventType: row.event_type,
    actor: row.actor,
    actorType: row.actor_type,
    action: row.action,
    status: row.status,
    errorMessage: row.error_message,
    targetType: row.target_type,
    targetId: row.target_id,
    createdAt: toIso(row.created_at),
  }));
}
