import type { Knex } from 'knex';
import type { AgentPrincipal } from '../auth/principal';
import { ApiError, invalid } from '../errors';
import { firstDuplicate, serviceIdOf } from './agentRules';
import { addNetworkFlows, writeWorkloads, type WorkloadRecord } from './pushStore';
import type { PushedFlow, PushedWorkload, PushSummary } from './types';

/** An agent speaks only for its own cluster. */
function ensureOwnCluster(agent: AgentPrincipal, clusterId: string): void {
  if (clusterId !== agent.clusterId) {
    throw new ApiError('FORBIDDEN', 'An agent token may only push for its own cluster', [
      { field: 'cluster_id', message: 'must be the cluster the token was issued for' },
    ]);
  }
}

function ensureWithin(count: number, max: number, what: string, variable: string): void {
  if (count > max) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `A push carries at most ${max} ${what} (${variable})`, [
      { field: what, message: `must hold at most ${max} items` },
    ]);
  }
}

const recordOf = (workload: PushedWorkload): WorkloadRecord => ({
  namespace: workload.namespace,
  kind: workload.kind,
  name: workload.name,
  labels: workload.labels ?? {},
  annotations: workload.annotations ?? {},
  replicas: workload.replicas ?? 0,
  ready_replicas: workload.ready_replicas ?? 0,
  images: workload.images ?? [],
  conditions: (workload.conditions ?? []).map(({ type, status, reason }) => ({ type, status, reason: reason ?? null })),
  service_id: serviceIdOf(workload),
});

/**
 * Writes an agent's push: the cluster's full set of workloads (any it left out are marked gone),
 * each linked to the entity its labels name.
 */
export async function pushWorkloads(
  trx: Knex,
  agent: AgentPrincipal,
  push: { cluster_id: string; workloads: PushedWorkload[] },
  maxWorkloads: number,
): Promise<PushSummary> {
  ensureOwnCluster(agent, push.cluster_id);
  ensureWithin(push.workloads.length, maxWorkloads, 'workloads', 'SHIPYARD_AGENT_PUSH_MAX_WORKLOADS');
  const duplicate = firstDuplicate(push.workloads);
  if (duplicate >= 0) {
    throw invalid('A workload appears twice in the push', [
      { field: `workloads/${duplicate}`, message: 'repeats the namespace, kind and name of an earlier workload' },
    ]);
  }
  const written = await writeWorkloads(trx, agent.clusterId, push.workloads.map(recordOf));
  return { received: push.workloads.length, ...written };
}

/** The deprecated network-flow push: counts add up per pair, port and protocol. */
export async function pushNetworkFlows(
  trx: Knex,
  agent: AgentPrincipal,
  push: { cluster_id: string; flows: PushedFlow[] },
  maxFlows: number,
): Promise<{ received: number; flows: number }> {
  ensureOwnCluster(agent, push.cluster_id);
  ensureWithin(push.flows.length, maxFlows, 'flows', 'SHIPYARD_AGENT_PUSH_MAX_FLOWS');
  const flows = await addNetworkFlows(trx, agent.clusterId, push.flows);
  return { received: push.flows.length, flows };
}
