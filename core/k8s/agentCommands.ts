import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { AgentPrincipal, CallerPrincipal } from '../auth/principal';
import { issueAgentToken, revokeAgentTokens } from '../auth/store';
import { notFound } from '../errors';
import { tenantLimits } from '../license/store';
import {
  activeClusterIds,
  agentExists,
  deleteAgent,
  deletePendingRegistration,
  lockRegistrations,
  parkRegistration,
  recordHeartbeat,
  upsertAgent,
} from './agentStore';
import type { AgentRegistration } from './types';
import { recordEvent } from '../webhooks/events';

export type RegistrationOutcome =
  | { registered: true; cluster_id: string; token: string }
  | { registered: false; cluster_id: string; status: 'pending'; attempts: number };

/**
 * Registers a cluster, or parks it when the tenant's cluster limit is reached (a registration
 * never fails for that). A cluster whose agent holds a live token re-registers freely (a new
 * token, the old one revoked); any other counts against the limit, including a cluster whose
 * tokens were revoked (auto-disconnect must not be undone by registering again).
 */
export async function registerAgent(
  trx: Knex,
  principal: CallerPrincipal,
  registration: AgentRegistration,
  licensePublicKey: KeyObject,
): Promise<RegistrationOutcome> {
  const clusterId = registration.cluster_id;
  await lockRegistrations(trx, principal.tenantId);
  const active = await activeClusterIds(trx);
  const { clusters: limit } = await tenantLimits(trx, licensePublicKey);
  if (!active.has(clusterId) && limit !== 0 && active.size >= limit) {
    const pending = await parkRegistration(trx, principal.tenantId, registration);
    await recordAudit(trx, principal, {
      eventType: 'agent.parked',
      action: 'register',
      targetType: 'cluster',
      targetId: clusterId,
      metadata: { attempts: pending.attempts, active_clusters: active.size, cluster_limit: limit },
    });
    return { registered: false, cluster_id: clusterId, status: 'pending', attempts: pending.attempts };
  }
  await upsertAgent(trx, principal.tenantId, registration);
  const token = await issueAgentToken(trx, principal.tenantId, clusterId);
  await deletePendingRegistration(trx, clusterId);
  await recordAudit(trx, principal, {
    eventType: 'agent.registered',
    action: 'register',
    targetType: 'cluster',
    targetId: clusterId,
    metadata: { display_name: registration.display_name },
  });
  const { cluster_id, display_name, environment, region } = registration;
  await recordEvent(trx, principal.tenantId, 'agent.registered', {
    agent: { cluster_id, display_name, environment, region },
  });
  return { registered: true, cluster_id: clusterId, token };
}

/** A new token for a registered cluster; the old one fails on its next request. */
export async function rotateAgentToken(trx: Knex, principal: CallerPrincipal, clusterId: string): Promise<string> {
  if (!(await agentExists(trx, clusterId))) throw notFound('Agent');
  const token = await issueAgentToken(trx, principal.tenantId, clusterId);
  await recordAudit(trx, principal, {
    eventType: 'agent.token_rotated',
    action: 'rotate',
    targetType: 'cluster',
    targetId: clusterId,
  });
  return token;
}

/** Revokes the cluster's tokens; the agent and everything it pushed stay. */
export async function revokeAgent(trx: Knex, principal: CallerPrincipal, clusterId: string): Promise<void> {
  if (!(await agentExists(trx, clusterId))) throw notFound('Agent');
  const revoked = await revokeAgentTokens(trx, clusterId);
  await recordAudit(trx, principal, {
    eventType: 'agent.token_revoked',
    action: 'revoke',
    targetType: 'cluster',
    targetId: clusterId,
    metadata: { tokens_revoked: revoked },
  });
}

/** Removes the agent, its tokens and all its data. */
export async function removeAgent(trx: Knex, principal: CallerPrincipal, clusterId: string): Promise<void> {
  if (!(await deleteAgent(trx, clusterId))) throw notFound('Agent');
  await recordAudit(trx, principal, {
    eventType: 'agent.deleted',
    action: 'delete',
    targetType: 'cluster',
    targetId: clusterId,
  });
}

export async function heartbeat(
  trx: Knex,
  agent: AgentPrincipal,
  report: { agent_version: string; node_count: number },
): Promise<Date> {
  const at = await recordHeartbeat(trx, agent.clusterId, report);
  // A live token always has its agent (deleting the agent deletes its tokens).
  if (!at) throw notFound('Agent');
  return at;
}
