import { pushGitopsResources, reportCommandStatus, requestGitopsAction } from '../../core/gitops/commands';
import { COMMAND_MOVES } from '../../core/gitops/rules';
import {
  getGitopsResource,
  gitopsStats,
  listGitopsResources,
  pendingCommands,
  recentCommands,
} from '../../core/gitops/store';
import type { GitopsCommandAction } from '../../core/gitops/types';
import type { AgentPrincipal } from '../../core/auth/principal';
import { notFound } from '../../core/errors';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute } from '../http/route';
import { GITOPS_PUSH_PATH } from '../k8s/pushBudgets';
import { clusterParams, uuidIdParams } from '../operations/schemas';
import {
  agentCommandParams,
  agentCommandsSchema,
  commandReportSchema,
  commandSchema,
  gitopsDetailSchema,
  gitopsListQuery,
  gitopsPageSchema,
  gitopsPushResultSchema,
  gitopsPushSchema,
  gitopsStatsSchema,
  queuedCommandSchema,
} from './schemas';

// GitOps: agents push their cluster's resources and read and report the commands users queue;
// users list the resources and queue syncs and refreshes.

/** Pending commands an agent reads at once (oldest first); it reads again once it has reported them. */
const PENDING_COMMANDS_MAX = 100;
const RECENT_COMMANDS = 20;

const MOVES_TEXT = Object.entries(COMMAND_MOVES)
  .filter(([, to]) => to.length)
  .map(([from, to]) => `${from} → ${to.join(' | ')}`)
  .join('; ');

/** An agent reads and reports only its own cluster's commands: any other cluster is not there for it. */
function requireOwnCluster(agent: AgentPrincipal, clusterId: string): void {
  if (clusterId !== agent.clusterId) throw notFound('Cluster');
}

const queueRoute = (action: GitopsCommandAction) =>
  defineRoute({
    method: 'POST',
    path: `/operations/gitops/{id}/${action}`,
    tag: 'Operations',
    access: 'operations:write',
    summary: `Queue a ${action} of the resource for its cluster’s agent (audited); the agent reads it from GET /k8s/{clusterId}/gitops/commands`,
    params: uuidIdParams,
    responses: {
      202: { description: '`{command}`, pending', schema: queuedCommandSchema },
      409: { description: 'The resource is gone: its agent no longer reports it' },
    },
    handler: async ({ db, auth, params }) => ({ command: await requestGitopsAction(db, auth, params.id, action) }),
  });

export const gitopsRoutes = [
  defineRoute({
    method: 'POST',
    path: GITOPS_PUSH_PATH,
    tag: 'Cluster agents',
    access: 'agent',
    summary:
      'An agent’s full set of its cluster’s GitOps resources: upserted in one statement, idempotent; resources it leaves out are marked gone',
    body: gitopsPushSchema,
    responses: {
      200: { description: 'What the push changed', schema: gitopsPushResultSchema },
      403: { description: '`cluster_id` is not the cluster the agent token was issued for' },
      404: { description: 'The token’s cluster has no registered agent (it was deleted)' },
      413: {
        description:
          'More resources than SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH, or the body over SHIPYARD_AGENT_PUSH_BODY_LIMIT',
      },
    },
    handler: ({ db, auth, body, deps }) =>
      pushGitopsResources(db, auth, body, deps.config.operations.gitopsMaxResourcesPerPush),
  }),
  defineRoute({
    method: 'GET',
    path: '/k8s/{clusterId}/gitops/commands',
    tag: 'Cluster agents',
    access: 'agent',
    summary: `The cluster’s pending GitOps commands, oldest first (at most ${PENDING_COMMANDS_MAX}); another cluster than the token’s is a 404`,
    params: clusterParams,
    responses: { 200: { description: '`{commands}`', schema: agentCommandsSchema } },
    handler: async ({ db, auth, params }) => {
      requireOwnCluster(auth, params.clusterId);
      return { commands: await pendingCommands(db, params.clusterId, PENDING_COMMANDS_MAX) };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/k8s/{clusterId}/gitops/commands/{commandId}',
    tag: 'Cluster agents',
    access: 'agent',
    summary: `Report a command’s status. Allowed moves: ${MOVES_TEXT}; any other is a 409. A command of another cluster is a 404`,
    params: agentCommandParams,
    body: commandReportSchema,
    responses: {
      200: { description: 'The command', schema: commandSchema },
      409: { description: 'The move is not allowed from the command’s status' },
    },
    handler: async ({ db, auth, params, body }) => {
      requireOwnCluster(auth, params.clusterId);
      return reportCommandStatus(db, auth, params.commandId, body);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/gitops',
    tag: 'Operations',
    access: 'operations:read',
    summary: 'GitOps resources the agents report, in id order, filtered; gone ones only with `include_gone`',
    query: gitopsListQuery,
    responses: { 200: { description: '`{resources, next_cursor}`', schema: gitopsPageSchema } },
    handler: async ({ db, query }) => {
      const { limit, cursor, ...filter } = query;
      const window = shapeDWindow({ limit, cursor });
      const page = shapeDPage(await listGitopsResources(db, filter, window), window);
      return { resources: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/gitops/stats',
    tag: 'Operations',
    access: 'operations:read',
    summary:
      'Counts of the present GitOps resources by sync status, health status, tool and cluster (`unknown`: not reported; the 100 most frequent values of each)',
    responses: { 200: { description: 'The counts', schema: gitopsStatsSchema } },
    handler: ({ db }) => gitopsStats(db),
  }),
  defineRoute({
    method: 'GET',
    path: '/operations/gitops/{id}',
    tag: 'Operations',
    access: 'operations:read',
    summary: `A GitOps resource and its ${RECENT_COMMANDS} most recent commands`,
    params: uuidIdParams,
    responses: { 200: { description: '`{resource, commands}`', schema: gitopsDetailSchema } },
    handler: async ({ db, params }) => {
      const resource = await getGitopsResource(db, params.id);
      if (!resource) throw notFound('GitOps resource');
      return { resource, commands: await recentCommands(db, params.id, RECENT_COMMANDS) };
    },
  }),
  queueRoute('sync'),
  queueRoute('refresh'),
];
