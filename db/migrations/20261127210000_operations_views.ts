import type { Knex } from 'knex';

// The operations views' reads: /operations/resources and the zombie lists page the tenant's
// workloads in id order; a cluster's network flows page in id order; the network-policy signal
// looks a workload up as a flow's destination as well as its source (the table's unique key
// already serves the source); the topology looks a flow's endpoint up among the workloads by
// namespace and name (their unique key has the kind between them).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index k8s_workloads_by_id on k8s_workloads (tenant_id, id);
    create index k8s_workloads_by_cluster_name on k8s_workloads (tenant_id, cluster_id, namespace, name);
    create index k8s_network_flows_by_id on k8s_network_flows (tenant_id, cluster_id, id);
    create index k8s_network_flows_by_destination
      on k8s_network_flows (tenant_id, cluster_id, destination_namespace, destination_name);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'drop index k8s_workloads_by_id, k8s_workloads_by_cluster_name, k8s_network_flows_by_id, k8s_network_flows_by_destination',
  );
}
