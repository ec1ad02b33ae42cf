import type { AgentConfig } from '../../core/config';
import type { BodyBudget } from '../http/jsonBody';
import { API_PREFIX } from '../http/router';

export const PUSH_PATH = '/k8s/agents/push';
export const NETWORK_FLOWS_PATH = '/k8s/agents/network-flows';

/**
 * An agent's push is a cluster's whole snapshot, larger than any other body: its own size limit,
 * and an array budget above the item budgets so that a push over them gets the 413 naming them.
 */
export function agentPushBudgets(agents: AgentConfig): Record<string, BodyBudget> {
  const budget = {
    limitBytes: agents.pushBodyLimitBytes,
    jsonArrayItems: 2 * Math.max(agents.pushMaxWorkloads, agents.pushMaxFlows),
  };
  return { [API_PREFIX + PUSH_PATH]: budget, [API_PREFIX + NETWORK_FLOWS_PATH]: budget };
}
