import { notFound } from '../../core/errors';
import { heartbeat, registerAgent, removeAgent, revokeAgent, rotateAgentToken } from '../../core/k8s/agentCommands';
import { agentStatus } from '../../core/k8s/agentRules';
import { findAgent, listAgents, type AgentRow } from '../../core/k8s/agentStore';
import type { Agent } from '../../core/k8s/types';
import type { AgentConfig } from '../../core/config';
import { pushNetworkFlows, pushWorkloads } from '../../core/k8s/pushCommands';
import { defineRoute, linksTo, OtherSuccess } from '../http/route';
import { NETWORK_FLOWS_PATH, PUSH_PATH } from './pushBudgets';
import {
  agentListSchema,
  agentSchema,
  agentTokenSchema,
  clusterParams,
  flowPushSchema,
  flowReplySchema,
  heartbeatReplySchema,
  heartbeatSchema,
  parkedSchema,
  pushReplySchema,
  pushSchema,
  registerSchema,
  revokedSchema,
} from './schemas';

const TAG = 'Cluster agents';

const withStatus = (row: AgentRow, config: AgentConfig, now = new Date()): Agent => ({
  ...row,
  status: agentStatus(row.last_heartbeat, now, config),
});

const OTHER_CLUSTER = { description: 'The body names another cluster than the agent token’s' } as const;

export const agentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/k8s/agents/register',
    tag: TAG,
    access: 'k8s-agents:create',
    summary:
      'Register a cluster and get its agent token (a cluster already active gets a new one). Past the tenant’s cluster limit the registration is parked (202) and never fails; each attempt is counted',
    body: registerSchema,
    responses: {
      201: {
        description: '`{cluster_id, token}`: the token is shown once',
        schema: agentTokenSchema,
        links: linksTo(
          [
            'GET /k8s/agents/{cluster_id}',
            'DELETE /k8s/agents/{cluster_id}',
            'POST /k8s/agents/{cluster_id}/rotate',
            'POST /k8s/agents/{cluster_id}/revoke',
          ],
          { cluster_id: '$response.body#/cluster_id' },
        ),
      },
      202: {
        description: 'Parked past the cluster limit: `{cluster_id, status: pending, attempts}`',
        schema: parkedSchema,
      },
    },
    handler: async ({ db, auth, body, deps }) => {
      const outcome = await registerAgent(db, auth, body, deps.licensePublicKey);
      if (outcome.registered) return { cluster_id: outcome.cluster_id, token: outcome.token };
      return new OtherSuccess(202, {
        cluster_id: outcome.cluster_id,
        status: outcome.status,
        attempts: outcome.attempts,
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/k8s/agents',
    tag: TAG,
    access: 'k8s-agents:read',
    summary: 'The tenant’s cluster agents, oldest first, with their status from the last heartbeat’s age',
    responses: { 200: { description: '`{agents}`', schema: agentListSchema } },
    handler: async ({ db, deps }) => {
      const now = new Date();
      return { agents: (await listAgents(db)).map((row) => withStatus(row, deps.config.agents, now)) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/k8s/agents/{cluster_id}',
    tag: TAG,
    access: 'k8s-agents:read',
    summary: 'A cluster agent',
    params: clusterParams,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    handler: async ({ db, deps, params }) => {
      const row = await findAgent(db, params.cluster_id);
      if (!row) throw notFound('Agent');
      return withStatus(row, deps.config.agents);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/k8s/agents/{cluster_id}',
    tag: TAG,
    access: 'k8s-agents:delete',
    summary: 'Remove a cluster: its agent, tokens and everything it pushed',
    params: clusterParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ db, auth, params }) => {
      await removeAgent(db, auth, params.cluster_id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/k8s/agents/{cluster_id}/rotate',
    tag: TAG,
    access: 'k8s-agents:update',
    summary: 'Issue a new agent token; the old one fails on its next request',
    params: clusterParams,
    responses: { 200: { description: '`{cluster_id, token}`: the token is shown once', schema: agentTokenSchema } },
    handler: async ({ db, auth, params }) => ({
      cluster_id: params.cluster_id,
      token: await rotateAgentToken(db, auth, params.cluster_id),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/k8s/agents/{cluster_id}/revoke',
    tag: TAG,
    access: 'k8s-agents:update',
    summary:
      'Revoke the agent’s tokens (the named revoke-agent-token operation): it can no longer authenticate; the agent and its data stay. Register or rotate to reconnect it',
    params: clusterParams,
    responses: { 200: { description: '`{cluster_id, revoked: true}`', schema: revokedSchema } },
    handler: async ({ db, auth, params }) => {
      await revokeAgent(db, auth, params.cluster_id);
      return { cluster_id: params.cluster_id, revoked: true as const };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/k8s/agents/heartbeat',
    tag: TAG,
    access: 'agent',
    summary: 'The agent reports it is alive, with its version and node count',
    body: heartbeatSchema,
    responses: { 200: { description: '`{cluster_id, status, last_heartbeat}`', schema: heartbeatReplySchema } },
    handler: async ({ db, auth, deps, body }) => {
      const at = await heartbeat(db, auth, body);
      return {
        cluster_id: auth.clusterId,
        status: agentStatus(at, new Date(), deps.config.agents),
        last_heartbeat: at,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: PUSH_PATH,
    tag: TAG,
    access: 'agent',
    summary:
      'The cluster’s full set of workloads: upserted in one statement; workloads it leaves out are marked gone; each links to the entity its `shipyard.dev/service-id` (else `app.kubernetes.io/name`) label or annotation names, created when unknown; an image change is a deployment',
    body: pushSchema,
    responses: {
      200: { description: '`{received, created, updated, gone, deployments}`', schema: pushReplySchema },
      403: OTHER_CLUSTER,
      413: {
        description:
          'More workloads than SHIPYARD_AGENT_PUSH_MAX_WORKLOADS, or a body over SHIPYARD_AGENT_PUSH_BODY_LIMIT',
      },
    },
    handler: ({ db, auth, deps, body }) => pushWorkloads(db, auth, body, deps.config.agents.pushMaxWorkloads),
  }),
  defineRoute({
    method: 'POST',
    path: NETWORK_FLOWS_PATH,
    tag: TAG,
    access: 'agent',
    deprecated: true,
    summary:
      'Deprecated: the network-flow push. Each flow’s count adds to the stored one (per source, destination, port and protocol)',
    body: flowPushSchema,
    responses: {
      200: { description: '`{received, flows}`', schema: flowReplySchema },
      403: OTHER_CLUSTER,
      413: {
        description: 'More flows than SHIPYARD_AGENT_PUSH_MAX_FLOWS, or a body over SHIPYARD_AGENT_PUSH_BODY_LIMIT',
      },
    },
    handler: ({ db, auth, deps, body }) => pushNetworkFlows(db, auth, body, deps.config.agents.pushMaxFlows),
  }),
];
