import type { Knex } from 'knex';
import type { PushedFlow, PushSummary } from './types';
import { subscribedTo } from '../webhooks/events';

/** A pushed workload as the push statement reads it: the entity's service id already resolved. */
export interface WorkloadRecord {
  namespace: string;
  kind: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  replicas: number;
  ready_replicas: number;
  images: string[];
  conditions: { type: string; status: string; reason: string | null }[];
  service_id: string | null;
}

/**
 * A cluster's full snapshot in one statement. Each CTE sees the tables as they were before the
 * statement (`previous`, paired with the pushed workloads), which is what tells an image change
 * and a real update apart. Agents push every 30 to 60 s and most pushes change little, so only
 * rows that need a write are offered to an upsert: ON CONFLICT locks every row it meets, even one
 * its WHERE then leaves alone, and rewriting or locking every row was most of a steady push's cost.
 * - `touched`: the entities the workloads name, created (type service, source kubernetes) when
 *   unknown. A `known` one gets last_activity_at = now (which the outbox trigger reindexes) when a
 *   workload of it is new, returns or changed images, and otherwise at most once a minute.
 *   `matched` adds the known entities left alone.
 * - `upserted`: the pushed workloads that are new, changed, return (gone_at cleared) or were last
 *   seen over a minute ago, so `last_seen_at` is exact to the minute.
 * - `gone`: the cluster's present workloads the push left out; `unlinked` queues their entities
 *   for reindexing.
 * - `deployed`: a deployment row per workload whose images changed.
 */
const PUSH_SQL = `
with input as (
  select * from jsonb_to_recordset(cast(:workloads as jsonb)) as i(
    namespace text, kind text, name text, labels jsonb, annotations jsonb, replicas int, ready_replicas int,
    images text[], conditions jsonb, service_id text)
),
previous as (
  select id, namespace, kind, name, labels, annotations, replicas, ready_replicas, images, conditions, entity_id,
    gone_at, last_seen_at
    from k8s_workloads where cluster_id = :cluster
),
paired as (
  select i.*, p.id as previous_id, p.labels as p_labels, p.annotations as p_annotations, p.replicas as p_replicas,
    p.ready_replicas as p_ready_replicas, p.images as p_images, p.conditions as p_conditions,
    p.entity_id as p_entity_id, p.gone_at as p_gone_at, p.last_seen_at as p_last_seen_at
    from input i left join previous p on p.namespace = i.namespace and p.kind = i.kind and p.name = i.name
),
known as (
  select id, service_id, last_activity_at from entities where service_id in (select service_id from input)
),
touched as (
  insert into entities as e (tenant_id, service_id, name, type, source)
  select app_current_tenant(), s.service_id, s.service_id, 'service', 'kubernetes'
    from (select distinct service_id from input where service_id is not null) s
    left join known k on k.service_id = s.service_id
   where k.id is null or k.last_activity_at < now() - interval '1 minute'
      or s.service_id in (
        select service_id from paired
         where previous_id is null or p_gone_at is not null or p_entity_id is null or p_images is distinct from images)
  order by s.service_id
  on conflict (tenant_id, service_id) do update set last_activity_at = now()
  returning id, service_id, name, type, source, created_at, (xmax = 0) as inserted
),
-- entity.created for the entities this push created (core/webhooks/events.ts), in this statement.
created_events as (
  insert into webhook_events (tenant_id, kind, data)
  select app_current_tenant(), 'entity.created', jsonb_build_object('entity', jsonb_build_object(
      'id', id, 'service_id', service_id, 'name', name, 'type', type, 'source', source, 'created_at', created_at))
    from touched where inserted and ${subscribedTo('entity.created')}
),
matched as (
  select id, service_id from touched
  union
  select id, service_id from known
),
upserted as (
  insert into k8s_workloads as w (tenant_id, cluster_id, namespace, kind, name, labels, annotations, replicas,
    ready_replicas, images, conditions, entity_id)
  select app_current_tenant(), :cluster, i.namespace, i.kind, i.name, i.labels, i.annotations, i.replicas,
    i.ready_replicas, i.images, i.conditions, m.id
    from paired i left join matched m on m.service_id = i.service_id
   where i.previous_id is null or i.p_gone_at is not null or i.p_last_seen_at < now() - interval '1 minute'
      or (i.p_labels, i.p_annotations, i.p_replicas, i.p_ready_replicas, i.p_images, i.p_conditions, i.p_entity_id)
         is distinct from (i.labels, i.annotations, i.replicas, i.ready_replicas, i.images, i.conditions, m.id)
  on conflict (tenant_id, cluster_id, namespace, kind, name) do update set
    labels = excluded.labels, annotations = excluded.annotations, replicas = excluded.replicas,
    ready_replicas = excluded.ready_replicas, images = excluded.images, conditions = excluded.conditions,
    entity_id = excluded.entity_id, last_seen_at = now(), gone_at = null
  returning w.id, w.labels, w.annotations, w.replicas, w.ready_replicas, w.images, w.conditions, w.entity_id
),
gone as (
  update k8s_workloads w set gone_at = now()
   where w.cluster_id = :cluster and w.gone_at is null
     -- a hashed subplan: one probe per row
     and (w.namespace, w.kind, w.name) not in (select namespace, kind, name from input)
  returning w.id, w.entity_id
),
unlinked as (
  -- A row-changing no-op: the outbox trigger reindexes the entities that lost a workload and were
  -- not pushed, so their documents stop listing it.
  update entities e set last_activity_at = e.last_activity_at
   where e.id in (select entity_id from gone) and e.id not in (select id from touched)
),
deployed as (
  insert into k8s_deployments (tenant_id, cluster_id, workload_id, entity_id, previous_images, images)
  select app_current_tenant(), :cluster, u.id, u.entity_id, p.images, u.images
    from upserted u join previous p on p.id = u.id
   where p.images is distinct from u.images
  returning id
)
select
  (select count(*) from upserted u where not exists (select 1 from previous p where p.id = u.id))::int as created,
  (select count(*) from upserted u join previous p on p.id = u.id
    where (p.labels, p.annotations, p.replicas, p.ready_replicas, p.images, p.conditions, p.entity_id)
          is distinct from (u.labels, u.annotations, u.replicas, u.ready_replicas, u.images, u.conditions, u.entity_id)
       or p.gone_at is not null)::int as updated,
  (select count(*) from gone)::int as gone,
  (select count(*) from deployed)::int as deployments`;

/** Writes a cluster's pushed workloads as its full snapshot (see PUSH_SQL). */
export async function writeWorkloads(
  trx: Knex,
  clusterId: string,
  workloads: WorkloadRecord[],
): Promise<Omit<PushSummary, 'received'>> {
  const { rows } = await trx.raw<{ rows: Omit<PushSummary, 'received'>[] }>(PUSH_SQL, {
    workloads: JSON.stringify(workloads),
    cluster: clusterId,
  });
  return rows[0];
}

/** Adds the pushed flows' counts to the cluster's (one row per pair, port and protocol). */
export async function addNetworkFlows(trx: Knex, clusterId: string, flows: PushedFlow[]): Promise<number> {
  const { rowCount } = await trx.raw<{ rowCount: number }>(
    `insert into k8s_network_flows as f (tenant_id, cluster_id, source_namespace, source_name, destination_namespace,
       destination_name, port, protocol, count)
     select app_current_tenant(), ?, source_namespace, source_name, destination_namespace, destination_name, port,
       protocol, sum(count)
       from jsonb_to_recordset(?::jsonb) as i(source_namespace text, source_name text, destination_namespace text,
         destination_name text, port int, protocol text, count bigint)
      group by 1, 2, 3, 4, 5, 6, 7, 8
     on conflict (tenant_id, cluster_id, source_namespace, source_name, destination_namespace, destination_name, port,
       protocol) do update set count = f.count + excluded.count, last_seen_at = now()`,
    [clusterId, JSON.stringify(flows)],
  );
  return rowCount;
}
