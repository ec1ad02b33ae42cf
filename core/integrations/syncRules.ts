import { SYNCED_TYPES, type IntegrationStatus, type IntegrationType, type SyncedType } from './types';
import { workflowId } from '../searchAttributes';

// Which integrations a sync may run for, and the order the schedule runs them in.

export const isSyncedType = (type: IntegrationType): type is SyncedType =>
  (SYNCED_TYPES as readonly IntegrationType[]).includes(type);

/** Why POST /integrations/{id}/sync cannot start (a 409), or undefined when it can. */
export function syncRefusal(integration: { type: IntegrationType; status: IntegrationStatus }): string | undefined {
  if (!isSyncedType(integration.type))
    return `A ${integration.type} integration has nothing to sync; only ${SYNCED_TYPES.join(' and ')} do`;
  if (integration.status === 'inactive') return 'The integration is inactive; set its status to active to sync it';
  return undefined;
}

/** One integration a sync runs for: ids only, as they enter workflow history. */
export interface SyncTarget {
  tenantId: string;
  integrationId: string;
}

/**
 * The targets round-robin by tenant (each tenant's first, then each one's second, …), keeping
 * each tenant's own order: a tenant with many integrations never holds the others back.
 */
export function interleaveByTenant(targets: SyncTarget[]): SyncTarget[] {
  const byTenant = new Map<string, SyncTarget[]>();
  for (const target of targets) {
    const lane = byTenant.get(target.tenantId);
    if (lane) lane.push(target);
    else byTenant.set(target.tenantId, [target]);
  }
  const lanes = [...byTenant.values()];
  const longest = Math.max(0, ...lanes.map((lane) => lane.length));
  const order: SyncTarget[] = [];
  for (let i = 0; i < longest; i++) for (const lane of lanes) if (i < lane.length) order.push(lane[i]);
  return order;
}

/** Longest status message kept: enough for any reason we write, short enough for a list. */
export const STATUS_MESSAGE_MAX = 500;

export const statusMessage = (reason: string) =>
  reason.length > STATUS_MESSAGE_MAX ? `${reason.slice(0, STATUS_MESSAGE_MAX - 1)}…` : reason;

/**
 * One workflow id per integration (ShipyardKind `integration-sync`): Temporal runs at most one
 * workflow per id at a time, so an integration never has two syncs at once.
 */
export const syncWorkflowId = (integrationId: string) => workflowId('integration-sync', integrationId);

/** Integrations one run of the schedule's tick goes through before it continues as new (its history stays small). */
export const SYNC_TICK_PAGE = 200;
