import type { Knex } from 'knex';
import { actorOf, recordAudit } from '../audit/store';
import type { AgentPrincipal, CallerPrincipal } from '../auth/principal';
import { ApiError, conflict, notFound } from '../errors';
import { clusterExists } from '../operations/clusterStore';
import { assertUniqueResources, canMoveCommand, COMMAND_MOVES } from './rules';
import {
  getGitopsResource,
  lockCommand,
  queueCommand,
  replaceClusterResources,
  setCommandStatus,
  type GitopsCommand,
  type PushOutcome,
} from './store';
import type { GitopsCommandAction, GitopsCommandStatus, PushedGitopsResource } from './types';

/**
 * An agent's GitOps push: the full set of its cluster's resources. The body names the cluster
 * the token was issued for; another one is refused, whatever the tenant holds.
 */
export async function pushGitopsResources(
  trx: Knex,
  agent: AgentPrincipal,
  push: { cluster_id: string; resources: PushedGitopsResource[] },
  maxResources: number,
): Promise<PushOutcome> {
  if (push.cluster_id !== agent.clusterId)
    throw new ApiError('FORBIDDEN', 'The agent token is for another cluster than cluster_id');
  if (push.resources.length > maxResources)
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `A push holds at most ${maxResources} resources (SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH); got ${push.resources.length}`,
    );
  assertUniqueResources(push.resources);
  if (!(await clusterExists(trx, agent.clusterId))) throw notFound('Cluster agent');
  return replaceClusterResources(trx, agent.tenantId, agent.clusterId, push.resources);
}

/**
 * Queues a sync or refresh of a resource for its cluster's agent, audited with the request. A
 * resource its agent no longer reports has nothing left to act on: 409.
 */
export async function requestGitopsAction(
  trx: Knex,
  principal: CallerPrincipal,
  resourceId: string,
  action: GitopsCommandAction,
): Promise<GitopsCommand> {
  const resource = await getGitopsResource(trx, resourceId);
  if (!resource) throw notFound('GitOps resource');
  if (resource.gone_at !== null) throw conflict('The resource is no longer reported by its cluster’s agent');
  const command = await queueCommand(trx, {
    tenantId: principal.tenantId,
    clusterId: resource.cluster_id,
    resourceId,
    action,
    requestedBy: actorOf(principal).actor,
  });
  await recordAudit(trx, principal, {
    eventType: `gitops.${action}_requested`,
    action,
    targetType: 'gitops_resource',
    targetId: resourceId,
    metadata: {
      command_id: command.id,
      cluster_id: resource.cluster_id,
      resource: `${resource.namespace}/${resource.kind}/${resource.name}`,
    },
  });
  return command;
}

/** An agent's report on one of its cluster's commands; a move `COMMAND_MOVES` does not allow is a 409. */
export async function reportCommandStatus(
  trx: Knex,
  agent: AgentPrincipal,
  commandId: string,
  report: { status: GitopsCommandStatus; message?: string | null },
): Promise<GitopsCommand> {
  const command = await lockCommand(trx, commandId, agent.clusterId);
  if (!command) throw notFound('Command');
  if (!canMoveCommand(command.status, report.status)) {
    const allowed = COMMAND_MOVES[command.status];
    throw conflict(
      `A ${command.status} command cannot move to ${report.status}` +
        (allowed.length ? ` (allowed: ${allowed.join(', ')})` : ' (it is finished)'),
    );
  }
  return setCommandStatus(trx, commandId, report.status, report.message ?? null);
}
