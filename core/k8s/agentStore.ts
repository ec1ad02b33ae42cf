import type { Knex } from 'knex';
import type { AgentRegistration } from './types';

// SQL for the agent registry, in the caller's tenant transaction (RLS scopes every statement).

/** An agent row with its workloads still present (not gone); the status is derived by the caller. */
export interface AgentRow {
  cluster_id: string;
  display_name: string;
  environment: string | null;
  region: string | null;
  last_heartbeat: Date | null;
  agent_version: string | null;
  node_count: number;
  workload_count: number;
  created_at: Date;
}

const AGENT_COLUMNS = `a.cluster_id, a.display_name, a.environment, a.region, a.last_heartbeat, a.agent_version,
  a.node_count, a.created_at,
  (select count(*)::int from k8s_workloads w
    where w.tenant_id = a.tenant_id and w.cluster_id = a.cluster_id and w.gone_at is null) as workload_count`;

export async function listAgents(trx: Knex): Promise<AgentRow[]> {
  const { rows } = await trx.raw<{ rows: AgentRow[] }>(
    `select ${AGENT_COLUMNS} from k8s_agents a order by a.created_at, a.id`,
  );
  return rows;
}

export async function findAgent(trx: Knex, clusterId: string): Promise<AgentRow | undefined> {
  const { rows } = await trx.raw<{ rows: AgentRow[] }>(
    `select ${AGENT_COLUMNS} from k8s_agents a where a.cluster_id = ?`,
    [clusterId],
  );
  return rows[0];
}

/**
 * Serializes the tenant's registrations until the transaction ends, so two of them cannot both
 * count the same free slot.
 */
export async function lockRegistrations(trx: Knex, tenantId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`cluster-registration:${tenantId}`]);
}

/** The tenant's clusters whose agent holds an unrevoked token: what the cluster limit counts. */
export async function activeClusterIds(trx: Knex): Promise<Set<string>> {
  const rows = await trx('k8s_agents as a')
    .whereExists((q) => q.from('agent_tokens as t').whereRaw('t.cluster_id = a.cluster_id').whereNull('t.revoked_at'))
    .select<{ cluster_id: string }[]>('a.cluster_id');
  return new Set(rows.map((row) => row.cluster_id));
}

export async function upsertAgent(trx: Knex, tenantId: string, registration: AgentRegistration): Promise<void> {
  await trx('k8s_agents')
    .insert({
      tenant_id: tenantId,
      cluster_id: registration.cluster_id,
      display_name: registration.display_name,
      environment: registration.environment ?? null,
      region: registration.region ?? null,
    })
    .onConflict(['tenant_id', 'cluster_id'])
    .merge(['display_name', 'environment', 'region', 'updated_at']);
}

export interface PendingRegistration {
  cluster_id: string;
  name: string;
  attempts: number;
  first_attempted_at: Date;
  last_attempted_at: Date;
}

/** Parks a registration past the limit, or counts one more attempt of a parked one. */
export async function parkRegistration(
  trx: Knex,
  tenantId: string,
  registration: AgentRegistration,
): Promise<PendingRegistration> {
  const [row] = await trx('pending_cluster_registrations')
    .insert({
      tenant_id: tenantId,
      cluster_id: registration.cluster_id,
      name: registration.display_name,
      environment: registration.environment ?? null,
      region: registration.region ?? null,
    })
    .onConflict(['tenant_id', 'cluster_id'])
    .merge({
      name: registration.display_name,
      environment: registration.environment ?? null,
      region: registration.region ?? null,
      attempts: trx.raw('pending_cluster_registrations.attempts + 1'),
      last_attempted_at: trx.fn.now(),
    })
    .returning<PendingRegistration[]>(['cluster_id', 'name', 'attempts', 'first_attempted_at', 'last_attempted_at']);
  return row;
}

export async function deletePendingRegistration(trx: Knex, clusterId: string): Promise<void> {
  await trx('pending_cluster_registrations').where({ cluster_id: clusterId }).delete();
}

/** Deletes the agent; its workloads, deployments, flows and GitOps rows go with it (cascade). */
export async function deleteAgent(trx: Knex, clusterId: string): Promise<boolean> {
  const deleted = await trx('k8s_agents').where({ cluster_id: clusterId }).delete();
  await trx('agent_tokens').where({ cluster_id: clusterId }).delete();
  return deleted > 0;
}

export async function recordHeartbeat(
  trx: Knex,
  clusterId: string,
  heartbeat: { agent_version: string; node_count: number },
): Promise<Date | undefined> {
  const [row] = await trx('k8s_agents')
    .where({ cluster_id: clusterId })
    .update({ ...heartbeat, last_heartbeat: trx.fn.now(), updated_at: trx.fn.now() })
    .returning<{ last_heartbeat: Date }[]>('last_heartbeat');
  return row?.last_heartbeat;
}

export async function agentExists(trx: Knex, clusterId: string): Promise<boolean> {
  return (await trx('k8s_agents').where({ cluster_id: clusterId }).first('id')) !== undefined;
}
