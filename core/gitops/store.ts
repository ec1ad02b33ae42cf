import type { Knex } from 'knex';
import { statement, type Placeholders } from '../../db/statements';
import { snapshotFilter, type SnapshotFilter } from '../operations/snapshotFilter';
import { countsStatement } from '../operations/counting';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import {
  SERVICE_ID_LABEL,
  type GitopsCommandAction,
  type GitopsCommandStatus,
  type PushedGitopsResource,
} from './types';

// GitOps resources the agents push (one row per cluster, namespace, kind and name, kept with
// gone_at when a full push no longer names it) and the commands users queue for them.

interface ResourceRow {
  id: string;
  cluster_id: string;
  namespace: string;
  kind: string;
  name: string;
  tool: string | null;
  sync_status: string | null;
  health_status: string | null;
  revision: string | null;
  source_url: string | null;
  source_path: string | null;
  entity_id: string | null;
  details: { labels?: Record<string, string> };
  first_seen_at: Date;
  last_seen_at: Date;
  gone_at: Date | null;
}

const RESOURCE_COLUMNS = [
  'g.id',
  'g.cluster_id',
  'g.namespace',
  'g.kind',
  'g.name',
  'g.tool',
  'g.sync_status',
  'g.health_status',
  'g.revision',
  'g.source_url',
  'g.source_path',
  'g.entity_id',
  'g.details',
  'g.first_seen_at',
  'g.last_seen_at',
  'g.gone_at',
];

export const toGitopsResource = (row: ResourceRow) => ({
  id: row.id,
  cluster_id: row.cluster_id,
  namespace: row.namespace,
  kind: row.kind,
  name: row.name,
  tool: row.tool,
  sync_status: row.sync_status,
  health_status: row.health_status,
  revision: row.revision,
  source_url: row.source_url,
  source_path: row.source_path,
  entity_id: row.entity_id,
  labels: row.details.labels ?? {},
  first_seen_at: toIso(row.first_seen_at),
  last_seen_at: toIso(row.last_seen_at),
  gone_at: toIsoOrNull(row.gone_at),
});

export type GitopsResource = ReturnType<typeof toGitopsResource>;

// One statement for the whole push: the resources go as one JSON array, are read back as rows
// and upserted together. Every row it writes gets the transaction's now() as last_seen_at, which
// is how `markMissingGone` tells the rows of this push from the others.
const upsertResources = statement<{ inserted: boolean }, { tenantId: string; clusterId: string; resources: string }>(
  (q, { tenantId, clusterId, resources }) =>
    q.raw(
      `insert into gitops_resources as g (tenant_id, cluster_id, namespace, kind, name, tool, sync_status,
         health_status, revision, source_url, source_path, entity_id, details, last_seen_at, gone_at)
       select ?::uuid, ?, r.namespace, r.kind, r.name, r.tool, r.sync_status, r.health_status, r.revision,
         r.source_url, r.source_path, e.id, jsonb_build_object('labels', coalesce(r.labels, '{}'::jsonb)), now(), null
         from jsonb_to_recordset(?::jsonb) as r(namespace text, kind text, name text, tool text, sync_status text,
           health_status text, revision text, source_url text, source_path text, labels jsonb)
         left join entities e on e.service_id = r.labels ->> '${SERVICE_ID_LABEL}'
       on conflict (tenant_id, cluster_id, namespace, kind, name) do update set
         tool = excluded.tool, sync_status = excluded.sync_status, health_status = excluded.health_status,
         revision = excluded.revision, source_url = excluded.source_url, source_path = excluded.source_path,
         entity_id = excluded.entity_id, details = excluded.details, last_seen_at = now(), gone_at = null
       returning (xmax = 0) as inserted`,
      [tenantId, clusterId, resources],
    ),
);

const markMissingGone = statement<{ id: string }, { tenantId: string; clusterId: string }>(
  (q, { tenantId, clusterId }) =>
    q('gitops_resources')
      .where({ tenant_id: tenantId, cluster_id: clusterId })
      .whereNull('gone_at')
      .whereRaw('last_seen_at < now()')
      .update({ gone_at: q.raw('now()') })
      .returning('id'),
);

export interface PushOutcome {
  received: number;
  created: number;
  updated: number;
  gone: number;
}

/**
 * Writes a cluster's full set of GitOps resources: one bulk upsert, then the cluster's resources
 * this push did not name are marked gone. Pushing the same set again changes nothing but
 * last_seen_at. Run in one transaction.
 */
export async function replaceClusterResources(
  trx: Knex,
  tenantId: string,
  clusterId: string,
  resources: PushedGitopsResource[],
): Promise<PushOutcome> {
  const written = resources.length
    ? await upsertResources.rows(trx, { tenantId, clusterId, resources: JSON.stringify(resources) })
    : [];
  const gone = await markMissingGone.rows(trx, { tenantId, clusterId });
  const created = written.filter((row) => row.inserted).length;
  return { received: resources.length, created, updated: written.length - created, gone: gone.length };
}

export interface GitopsFilter extends SnapshotFilter {
  cluster?: string;
  namespace?: string;
  tool?: string;
  sync_status?: string;
  health_status?: string;
}

const gitopsFilter = snapshotFilter('gitops_resources', 'g', {
  cluster: 'g.cluster_id',
  namespace: 'g.namespace',
  tool: 'g.tool',
  sync_status: 'g.sync_status',
  health_status: 'g.health_status',
});

type FilterValues = Required<Omit<GitopsFilter, 'include_gone'>>;

const ID_ORDER: KeysetOrder = { columns: [{ column: 'g.id', kind: 'uuid' }], direction: 'asc' };

const resourcePage = keysetStatement({
  order: ID_ORDER,
  build: (q, values: Placeholders<FilterValues>, shape: ReturnType<typeof gitopsFilter.shapeOf>) =>
    gitopsFilter.apply(q, values, shape).select(RESOURCE_COLUMNS),
  toItem: toGitopsResource,
});

/** A page of the tenant's GitOps resources in id order (the (tenant_id, id) index). */
export function listGitopsResources(
  db: Knex,
  filter: GitopsFilter,
  window: KeysetWindow,
): Promise<KeysetRow<GitopsResource>[]> {
  return resourcePage(db, window, filter as FilterValues, gitopsFilter.shapeOf(filter));
}

const resourceById = statement<ResourceRow, { id: string }>((q, { id }) =>
  q('gitops_resources as g').where('g.id', id).first(RESOURCE_COLUMNS),
);

export async function getGitopsResource(db: Knex, id: string): Promise<GitopsResource | undefined> {
  const row = await resourceById.first(db, { id });
  return row && toGitopsResource(row);
}

const resourceStats = countsStatement('gitops_resources where gone_at is null', {
  by_sync_status: 'sync_status',
  by_health_status: 'health_status',
  by_tool: 'tool',
  by_cluster: 'cluster_id',
});

/** Counts of the tenant's present GitOps resources; a value not reported counts as `unknown`. */
export const gitopsStats = (db: Knex) => resourceStats(db);

interface CommandRow {
  id: string;
  cluster_id: string;
  resource_id: string;
  action: GitopsCommandAction;
  status: GitopsCommandStatus;
  message: string | null;
  requested_by: string;
  created_at: Date;
  updated_at: Date;
}

const COMMAND_COLUMNS = [
  'c.id',
  'c.cluster_id',
  'c.resource_id',
  'c.action',
  'c.status',
  'c.message',
  'c.requested_by',
  'c.created_at',
  'c.updated_at',
];

export const toCommand = (row: CommandRow) => ({
  id: row.id,
  cluster_id: row.cluster_id,
  resource_id: row.resource_id,
  action: row.action,
  status: row.status,
  message: row.message,
  requested_by: row.requested_by,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

export type GitopsCommand = ReturnType<typeof toCommand>;

const insertCommand = statement<
  CommandRow,
  { tenantId: string; clusterId: string; resourceId: string; action: GitopsCommandAction; requestedBy: string }
>((q, { tenantId, clusterId, resourceId, action, requestedBy }) =>
  q('gitops_commands as c')
    .insert({
      tenant_id: tenantId,
      cluster_id: clusterId,
      resource_id: resourceId,
      action,
      requested_by: requestedBy,
    })
    .returning(COMMAND_COLUMNS),
);

export async function queueCommand(
  db: Knex,
  command: {
    tenantId: string;
    clusterId: string;
    resourceId: string;
    action: GitopsCommandAction;
    requestedBy: string;
  },
): Promise<GitopsCommand> {
  const [row] = await insertCommand.rows(db, command);
  return toCommand(row);
}

const commandsOfResource = statement<CommandRow, { resourceId: string; limit: number }>((q, { resourceId, limit }) =>
  q('gitops_commands as c')
    .where('c.resource_id', resourceId)
    .orderBy([
      { column: 'c.created_at', order: 'desc' },
      { column: 'c.id', order: 'desc' },
    ])
    .limit(limit)
    .select(COMMAND_COLUMNS),
);

/** The resource's most recent commands, newest first. */
export async function recentCommands(db: Knex, resourceId: string, limit: number): Promise<GitopsCommand[]> {
  return (await commandsOfResource.rows(db, { resourceId, limit })).map(toCommand);
}

type AgentCommandRow = CommandRow & { namespace: string; kind: string; name: string };

const pendingOfCluster = statement<AgentCommandRow, { clusterId: string; limit: number }>((q, { clusterId, limit }) =>
  q('gitops_commands as c')
    .join('gitops_resources as g', 'g.id', 'c.resource_id')
    .where('c.cluster_id', clusterId)
    .where('c.status', 'pending')
    .orderBy([
      { column: 'c.created_at', order: 'asc' },
      { column: 'c.id', order: 'asc' },
    ])
    .limit(limit)
    .select([...COMMAND_COLUMNS, 'g.namespace', 'g.kind', 'g.name']),
);

/** The cluster's pending commands, oldest first, each with the resource it is for. */
export async function pendingCommands(db: Knex, clusterId: string, limit: number) {
  return (await pendingOfCluster.rows(db, { clusterId, limit })).map((row) => ({
    ...toCommand(row),
    resource: { namespace: row.namespace, kind: row.kind, name: row.name },
  }));
}

const lockedCommand = statement<CommandRow, { id: string; clusterId: string }>((q, { id, clusterId }) =>
  q('gitops_commands as c').where('c.id', id).where('c.cluster_id', clusterId).forUpdate().first(COMMAND_COLUMNS),
);

/** The cluster's command, locked until the transaction ends; undefined when the cluster has no such command. */
export async function lockCommand(db: Knex, id: string, clusterId: string): Promise<GitopsCommand | undefined> {
  const row = await lockedCommand.first(db, { id, clusterId });
  return row && toCommand(row);
}

const commandUpdate = statement<CommandRow, { id: string; status: GitopsCommandStatus; message: string | null }>(
  (q, { id, status, message }) =>
    q('gitops_commands as c')
      .where('c.id', id)
      .update({ status, message, updated_at: q.raw('now()') })
      .returning(COMMAND_COLUMNS),
);

export async function setCommandStatus(
  db: Knex,
  id: string,
  status: GitopsCommandStatus,
  message: string | null,
): Promise<GitopsCommand> {
  const [row] = await commandUpdate.rows(db, { id, status, message });
  return toCommand(row);
}
