import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';
import { actorOf, recordAudit, recordSystemAudit, type AuditEvent } from './store';

/** A job acting in a tenant without a caller (scorecard evaluation, an initiative's deadline). */
export interface SystemActor {
  kind: 'system';
  tenantId: string;
  /** What the audit log and `created_by` show, e.g. `scorecards`. */
  name: string;
}

/** Who makes a change that a caller or a job may both make: a principal, or a system actor. */
export type Actor = Principal | SystemActor;

export const actorName = (actor: Actor): string => (actor.kind === 'system' ? actor.name : actorOf(actor).actor);

/** recordAudit for a principal, recordSystemAudit for a job. */
export const auditAs = (trx: Knex, actor: Actor, event: AuditEvent): Promise<void> =>
  actor.kind === 'system' ? recordSystemAudit(trx, actor.tenantId, actor.name, event) : recordAudit(trx, actor, event);
