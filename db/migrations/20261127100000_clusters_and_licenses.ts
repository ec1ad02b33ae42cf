import type { Knex } from 'knex';
import { tenantIsolationSql } from '../tenancy';

// Cluster agents and what they push (workloads, the deployments their image changes make,
// network flows, GitOps resources and the commands queued for them), and each tenant's license
// with the cluster registrations parked past its limit. A cluster's rows hang off its agent by
// (tenant_id, cluster_id), so deleting the agent deletes all of them; auto-disconnect and
// revocation only revoke the agent's tokens (agent_tokens) and keep the rows.
const TENANT_TABLES = [
  'k8s_agents',
  'k8s_workloads',
  'k8s_deployments',
  'k8s_network_flows',
  'gitops_resources',
  'gitops_commands',
  'licenses',
  'cluster_grants',
  'pending_cluster_registrations',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table k8s_agents (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null check (length(cluster_id) between 1 and 253),
      display_name text not null,
      environment text,
      region text,
      agent_version text,
      node_count integer not null default 0 check (node_count >= 0),
      last_heartbeat timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (tenant_id, cluster_id)
    );
    create index k8s_agents_by_created on k8s_agents (tenant_id, created_at, id);

    -- One row per workload an agent reported, kept when it disappears from a full push
    -- (gone_at set) so zombies and history stay readable; it returns when pushed again.
    create table k8s_workloads (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      namespace text not null,
      kind text not null,
      name text not null,
      labels jsonb not null default '{}',
      annotations jsonb not null default '{}',
      replicas integer not null default 0,
      ready_replicas integer not null default 0,
      images text[] not null default '{}',
      conditions jsonb not null default '[]',
      entity_id uuid references entities(id) on delete set null,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      gone_at timestamptz,
      foreign key (tenant_id, cluster_id) references k8s_agents (tenant_id, cluster_id) on delete cascade,
      unique (tenant_id, cluster_id, namespace, kind, name)
    );
    create index k8s_workloads_by_entity on k8s_workloads (entity_id);
    create index k8s_workloads_by_name on k8s_workloads (tenant_id, name, id);

    -- An image change of a workload between two pushes: a deployment of its entity.
    create table k8s_deployments (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      workload_id uuid not null references k8s_workloads(id) on delete cascade,
      entity_id uuid references entities(id) on delete cascade,
      previous_images text[] not null,
      images text[] not null,
      deployed_at timestamptz not null default now(),
      foreign key (tenant_id, cluster_id) references k8s_agents (tenant_id, cluster_id) on delete cascade
    );
    create index k8s_deployments_by_workload on k8s_deployments (workload_id);
    create index k8s_deployments_by_entity on k8s_deployments (entity_id, deployed_at desc);
    create index k8s_deployments_by_cluster on k8s_deployments (tenant_id, cluster_id);

    -- Traffic between two workloads of a cluster, from the deprecated network-flow push; one row
    -- per pair, port and protocol, its count accumulating.
    create table k8s_network_flows (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      source_namespace text not null,
      source_name text not null,
      destination_namespace text not null,
      destination_name text not null,
      port integer not null check (port between 0 and 65535),
      protocol text not null,
      count bigint not null default 0,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      foreign key (tenant_id, cluster_id) references k8s_agents (tenant_id, cluster_id) on delete cascade,
      unique (tenant_id, cluster_id, source_namespace, source_name, destination_namespace, destination_name, port, protocol)
    );

    create table gitops_resources (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      namespace text not null,
      kind text not null,
      name text not null,
      tool text,
      sync_status text,
      health_status text,
      revision text,
      source_url text,
      source_path text,
      entity_id uuid references entities(id) on delete set null,
      details jsonb not null default '{}',
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      gone_at timestamptz,
      foreign key (tenant_id, cluster_id) references k8s_agents (tenant_id, cluster_id) on delete cascade,
      unique (tenant_id, cluster_id, namespace, kind, name)
    );
    create index gitops_resources_by_entity on gitops_resources (entity_id);
    create index gitops_resources_by_id on gitops_resources (tenant_id, id);

    -- A sync or refresh a user queued for the cluster's agent, which reads and reports it.
    create table gitops_commands (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      resource_id uuid not null references gitops_resources(id) on delete cascade,
      action text not null check (action in ('sync', 'refresh')),
      status text not null default 'pending' check (status in ('pending', 'running', 'succeeded', 'failed')),
      message text,
      requested_by text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      foreign key (tenant_id, cluster_id) references k8s_agents (tenant_id, cluster_id) on delete cascade
    );
    create index gitops_commands_by_resource on gitops_commands (resource_id);
    create index gitops_commands_by_cluster on gitops_commands (tenant_id, cluster_id, status, created_at);

    -- A tenant's activated license: the signed key as activated (re-verified when read, so a
    -- key that no longer verifies falls back to free limits) and what its payload said.
    create table licenses (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      license_key text not null,
      key_prefix text not null,
      edition text not null check (edition in ('beta', 'standard', 'airgapped')),
      type text not null default 'selfhosted' check (type in ('selfhosted', 'saas', 'partner')),
      clusters integer not null default 0 check (clusters >= 0),
      nodes integer not null default 0 check (nodes >= 0),
      licensee text not null,
      issued_at timestamptz not null,
      expires_at timestamptz,
      activated_at timestamptz not null default now(),
      beta_ends_at timestamptz,
      beta_grace_ends_at timestamptz
    );

    -- Clusters an admin granted by approving parked registrations, on top of the edition's or
    -- the license's own (any edition, free included, so not a column of licenses).
    create table cluster_grants (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      approved_clusters integer not null default 0 check (approved_clusters >= 0),
      updated_at timestamptz not null default now()
    );

    create table pending_cluster_registrations (
      tenant_id uuid not null references tenants(id) on delete cascade,
      cluster_id text not null,
      name text not null,
      environment text,
      region text,
      attempts integer not null default 1 check (attempts >= 1),
      first_attempted_at timestamptz not null default now(),
      last_attempted_at timestamptz not null default now(),
      primary key (tenant_id, cluster_id)
    );
  `);
  for (const table of TENANT_TABLES) await knex.raw(tenantIsolationSql(table));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table ${[...TENANT_TABLES].reverse().join(', ')}`);
}
