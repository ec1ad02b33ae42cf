import type { Knex } from 'knex';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { statement, type Placeholders } from '../../db/statements';
import { toIso, toIsoOrNull } from '../timestamps';
import {
  SERVICE_TAG_PREFIX,
  type IncidentSeverity,
  type IncidentStatus,
  type IncidentUrgency,
  type ToolIncident,
  type ToolOncall,
} from './types';

// Incidents and on-call entries of entities, as incident-tool-a syncs bring them (SQL only). Every
// function runs in the tenant's transaction: row-level security keeps it to that tenant.

interface IncidentRow {
  id: string;
  integration_id: string;
  external_id: string;
  service_id: string;
  title: string;
  status: IncidentStatus;
  urgency: IncidentUrgency | null;
  severity: IncidentSeverity | null;
  url: string | null;
  opened_at: Date;
  resolved_at: Date | null;
  synced_at: Date;
}

interface OncallRow {
  integration_id: string;
  service_id: string;
  escalation_policy: string | null;
  schedule: string | null;
  level: number;
  user_name: string;
  user_email: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  synced_at: Date;
}

const INCIDENT_COLUMNS = [
  'id',
  'integration_id',
  'external_id',
  'service_id',
  'title',
  'status',
  'urgency',
  'severity',
  'url',
  'opened_at',
  'resolved_at',
  'synced_at',
];

const ONCALL_COLUMNS = [
  'integration_id',
  'service_id',
  'escalation_policy',
  'schedule',
  'level',
  'user_name',
  'user_email',
  'starts_at',
  'ends_at',
  'synced_at',
];

export const toIncident = (row: IncidentRow) => ({
  ...row,
  opened_at: toIso(row.opened_at),
  resolved_at: toIsoOrNull(row.resolved_at),
  synced_at: toIso(row.synced_at),
});

export const toOncall = (row: OncallRow) => ({
  ...row,
  starts_at: toIsoOrNull(row.starts_at),
  ends_at: toIsoOrNull(row.ends_at),
  synced_at: toIso(row.synced_at),
});

/**
 * The ids of the entities each of `serviceIds` names by its tag (`incident-tool-a/service-id=<id>`),
 * by service id; services no entity names are left out. One query, on the tags' GIN index.
 */
export async function entitiesByService(trx: Knex, serviceIds: string[]): Promise<Map<string, string[]>> {
  const tags = serviceIds.map((id) => `${SERVICE_TAG_PREFIX}${id}`);
  const rows: { id: string; tags: string[] }[] = await trx('entities')
    .whereRaw('tags && ?::text[]', [tags])
    .select('id', 'tags');
  const wanted = new Set(tags);
  const byService = new Map<string, string[]>();
  for (const row of rows)
    for (const tag of row.tags.filter((t) => wanted.has(t))) {
      const serviceId = tag.slice(SERVICE_TAG_PREFIX.length);
      byService.set(serviceId, [...(byService.get(serviceId) ?? []), row.id]);
    }
  return byService;
}

/** Rows per insert: well under PostgreSQL's 65,535 bound parameters. */
const INSERT_CHUNK = 1000;

/**
 * Writes the tool's incidents for each of `entityIds`: new ones inserted, known ones (same tool
 * id, integration and entity) brought to what the tool says now, resolution included.
 */
export async function upsertIncidents(
  trx: Knex,
  target: { tenantId: string; integrationId: string; entityIds: string[] },
  incidents: ToolIncident[],
): Promise<number> {
  const rows = target.entityIds.flatMap((entityId) =>
    incidents.map((incident) => ({
      tenant_id: target.tenantId,
      integration_id: target.integrationId,
      entity_id: entityId,
      ...incident,
    })),
  );
  for (let i = 0; i < rows.length; i += INSERT_CHUNK)
    await trx('incidents')
      .insert(rows.slice(i, i + INSERT_CHUNK))
      .onConflict(['integration_id', 'external_id', 'entity_id'])
      .merge(['service_id', 'title', 'status', 'urgency', 'severity', 'url', 'opened_at', 'resolved_at', 'synced_at']);
  return rows.length;
}

/** The service's on-call entries of the integration replaced by `oncalls`, for each of `entityIds`. */
export async function replaceOncall(
  trx: Knex,
  target: { tenantId: string; integrationId: string; serviceId: string; entityIds: string[] },
  oncalls: ToolOncall[],
): Promise<number> {
  await trx('oncall_entries').where({ integration_id: target.integrationId, service_id: target.serviceId }).delete();
  const rows = target.entityIds.flatMap((entityId) =>
    oncalls.map((oncall) => ({
      tenant_id: target.tenantId,
      integration_id: target.integrationId,
      entity_id: entityId,
      ...oncall,
    })),
  );
  for (let i = 0; i < rows.length; i += INSERT_CHUNK)
    await trx('oncall_entries').insert(rows.slice(i, i + INSERT_CHUNK));
  return rows.length;
}

/** Drops the integration's on-call entries of services no entity names any more. */
export async function dropOncallOfOtherServices(trx: Knex, integrationId: string, serviceIds: string[]): Promise<void> {
  await trx('oncall_entries')
    .where({ integration_id: integrationId })
    .whereRaw('service_id <> all(?::text[])', [serviceIds])
    .delete();
}

const NEWEST_FIRST: KeysetOrder = {
  columns: [
    { column: 'opened_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'desc',
};

const incidentPage = keysetStatement({
  order: NEWEST_FIRST,
  build: (q, values: Placeholders<{ entityId: string; status?: IncidentStatus }>, shape: 'all' | 'status') => {
    const query = q('incidents').where({ entity_id: values.entityId }).select(INCIDENT_COLUMNS);
    return shape === 'status' ? query.where({ status: values.status }) : query;
  },
  toItem: toIncident,
});

/** A page of the entity's incidents, newest first, all or those of one status. */
export function listEntityIncidents(
  db: Knex,
  entityId: string,
  status: IncidentStatus | undefined,
  window: KeysetWindow,
): Promise<KeysetRow<ReturnType<typeof toIncident>>[]> {
  return status
    ? incidentPage(db, window, { entityId, status }, 'status')
    : incidentPage(db, window, { entityId }, 'all');
}

const oncallOfEntity = statement<OncallRow, { entityId: string; limit: number }>((q, values) =>
  q('oncall_entries')
    .where({ entity_id: values.entityId })
    .orderBy([
      { column: 'level', order: 'asc' },
      { column: 'starts_at', order: 'asc', nulls: 'first' },
      { column: 'id', order: 'asc' },
    ])
    .limit(values.limit)
    .select(ONCALL_COLUMNS),
);

/** Who is on call for the entity, by escalation level, at most `limit` entries. */
export async function entityOncall(db: Knex, entityId: string, limit: number) {
  return (await oncallOfEntity.rows(db, { entityId, limit })).map(toOncall);
}
