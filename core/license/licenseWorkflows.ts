import { workflowId } from '../searchAttributes';
import type { Config } from '../config';
import type { RecurringWorkflow } from '../schedules';
import type { Disconnection } from './store';

// The contracts of the licensing workflows (workflows/betaGrace.ts, workflows/autoDisconnect.ts),
// named here so the API and the schedule start them by name without importing workflow code.

/** One Beta grace workflow per tenant: a second start for the same tenant is the same run. */
export const betaGraceWorkflowId = (tenantId: string) => workflowId('beta-grace', tenantId);

/**
 * Sent to a tenant's Beta grace workflow when its license changes (a key activated): that grace
 * ends there; a new Beta key past its end starts a grace of its own at the next status read.
 */
export const LICENSE_CHANGED_SIGNAL = 'license-changed';
export type LicenseChangedSignal = typeof LICENSE_CHANGED_SIGNAL;

export interface BetaGraceInput {
  tenant_id: string;
  /** ISO time the read-only window ends. */
  grace_ends_at: string;
  grace_ms: number;
}

/** `licensed`: a key activated in the meantime ended the grace; `disconnected`: it ran out (what was disconnected). */
export type BetaGraceOutcome = { outcome: 'licensed' } | { outcome: 'disconnected'; disconnection: Disconnection };
export type BetaGraceWorkflow = (input: BetaGraceInput) => Promise<BetaGraceOutcome>;

export interface AutoDisconnectInput {
  grace_ms: number;
}
export interface AutoDisconnectResult {
  tenants: number;
  revoked: number;
}
export type AutoDisconnectWorkflow = (input: AutoDisconnectInput) => Promise<AutoDisconnectResult>;

/** What disconnecting one tenant needs: the grace, to check again that it is over. */
export interface DisconnectTenantInput {
  tenant_id: string;
  grace_ms: number;
}

/** The fixed id that makes creating the schedule idempotent: one schedule per namespace. */
export const AUTO_DISCONNECT_SCHEDULE_ID = 'shipyard-auto-disconnect';

/**
 * The platform pool's auto-disconnect, every `license.autoDisconnectIntervalMs` (a day). Temporal
 * appends each run's scheduled time to its workflow id and skips a run while one is going, so
 * however many platform workers run, each cycle runs once: the spec's distributed lock.
 */
export function autoDisconnectSchedule(config: Config): RecurringWorkflow {
  return {
    scheduleId: AUTO_DISCONNECT_SCHEDULE_ID,
    workflowType: 'autoDisconnect',
    pool: 'platform',
    everyMs: config.license.autoDisconnectIntervalMs,
    args: [{ grace_ms: config.license.betaGraceMs }] satisfies Parameters<AutoDisconnectWorkflow>,
    kind: 'auto-disconnect',
  };
}
