import type { Knex } from 'knex';
import type { ManifestType } from '../catalog/types';
import { idOr } from '../ids';
import { keysetStatement, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { toIso } from '../timestamps';
import { statement, type Placeholders } from '../../db/statements';

// The manifests table: one row per entity declared by a manifest, keeping the document as it
// was written (ours or Backstage's).

interface ManifestRow {
  id: string;
  entity_id: string;
  service_id: string;
  manifest_type: ManifestType;
  content: string;
  created_at: Date;
  updated_at: Date;
}

export interface ManifestSummary {
  id: string;
  entity_id: string;
  service_id: string;
  manifest_type: ManifestType;
  created_at: string;
  updated_at: string;
}

export interface ManifestView extends ManifestSummary {
  content: string;
}

const SUMMARY_COLUMNS = ['id', 'entity_id', 'service_id', 'manifest_type', 'created_at', 'updated_at'];
const COLUMNS = [...SUMMARY_COLUMNS, 'content'];

const toSummary = (row: Omit<ManifestRow, 'content'>): ManifestSummary => ({
  id: row.id,
  entity_id: row.entity_id,
  service_id: row.service_id,
  manifest_type: row.manifest_type,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
});

const toView = (row: ManifestRow): ManifestView => ({ ...toSummary(row), content: row.content });

// service_id is unique per tenant, so it alone orders the list (served by the unique index).
const LIST_ORDER: KeysetOrder = { columns: [{ column: 'service_id', kind: 'text' }], direction: 'asc' };

const manifestPage = keysetStatement({
  order: LIST_ORDER,
  build: (q, { manifestType }: Placeholders<{ manifestType: ManifestType | null }>, typed: boolean) => {
    const query = q('manifests').select(SUMMARY_COLUMNS);
    return typed ? query.where({ manifest_type: manifestType }) : query;
  },
  toItem: toSummary,
});

/** A page of manifests by service_id, without their content. */
export function listManifests(
  db: Knex,
  window: KeysetWindow,
  filter: { manifestType?: ManifestType },
): Promise<KeysetRow<ManifestSummary>[]> {
  const { manifestType = null } = filter;
  return manifestPage(db, window, { manifestType }, manifestType !== null);
}

const manifestBy = statement<ManifestRow, { ref: string }, 'id' | 'service_id'>((q, { ref }, column) =>
  q('manifests').where(column, ref).first(COLUMNS),
);

/** By id, or by the service_id of the entity it declares. */
export async function getManifest(db: Knex, ref: string): Promise<ManifestView | undefined> {
  const row = await manifestBy.first(db, { ref }, idOr(ref, 'service_id'));
  return row && toView(row);
}

export type ManifestChange = 'created' | 'updated' | 'unchanged';

const manifestOfEntity = statement<ManifestRow, { entityId: string }>((q, { entityId }) =>
  q('manifests').where({ entity_id: entityId }).first(COLUMNS),
);

/**
 * Makes `manifest` the one of its entity. The row changes only when the document or its format
 * does, so a repeated write keeps updated_at.
 */
export async function saveManifest(
  db: Knex,
  tenantId: string,
  manifest: { entity_id: string; service_id: string; manifest_type: ManifestType; content: string },
): Promise<{ manifest: ManifestView; change: ManifestChange }> {
  const { rows } = await db.raw<{ rows: (ManifestRow & { inserted: boolean })[] }>(
    `insert into manifests (tenant_id, entity_id, service_id, manifest_type, content)
     values (?, ?, ?, ?, ?)
     on conflict (entity_id) do update
       set service_id = excluded.service_id, manifest_type = excluded.manifest_type,
           content = excluded.content, updated_at = now()
       where (manifests.content, manifests.manifest_type) is distinct from (excluded.content, excluded.manifest_type)
     returning ${COLUMNS.join(', ')}, (xmax = 0) as inserted`,
    [tenantId, manifest.entity_id, manifest.service_id, manifest.manifest_type, manifest.content],
  );
  if (rows[0]) return { manifest: toView(rows[0]), change: rows[0].inserted ? 'created' : 'updated' };
  const [row] = await manifestOfEntity.rows(db, { entityId: manifest.entity_id });
  return { manifest: toView(row), change: 'unchanged' };
}
