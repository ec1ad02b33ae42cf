import type { AgentConfig, OperationsConfig } from '../../core/config';
import type { BodyBudget } from '../http/jsonBody';
import { API_PREFIX } from '../http/router';

export const PUSH_PATH = '/k8s/agents/push';
export const NETWORK_FLOWS_PATH = '/k8s/agents/network-flows';
export const GITOPS_PUSH_PATH = '/k8s/gitops/push';

/**
 * An agent's push (workloads, flows, GitOps resources) is a cluster's whole snapshot, larger than
 * any other body: its own size limit, and an array budget above the item budgets so that a push
 * over them gets the 413 naming them.
 */
export function agentPushBudgets(agents: AgentConfig, operations: OperationsConfig): Record<string, BodyBudget> {
  const budget = {
    limitBytes: agents.pushBodyLimitBytes,
    jsonArrayItems: 2 * Math.max(agents.pushMaxWorkloads, agents.pushMaxFlows, operations.gitopsMaxResourcesPerPush),
  };
  return {
    [API_PREFIX + PUSH_PATH]: budget,
    [API_PREFIX + NETWORK_FLOWS_PATH]: budget,
    [API_PREFIX + GITOPS_PUSH_PATH]: budget,
  };
}
