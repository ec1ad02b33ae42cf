import type { Knex } from 'knex';
import { recentActivity } from '../audit/store';
import type { AuditStatus } from '../audit/types';
import { toIso } from '../timestamps';
import { statement } from '../../db/statements';
import type { FieldChange } from './entityRules';
import type { ChangelogAction } from './types';

// The entity changelog: one row per changed field of every write, with the actor.

export interface ChangelogEntry {
  id: string;
  timestamp: string;
  action: ChangelogAction;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  actor: string;
}

interface ChangelogRow {
  id: string;
  action: ChangelogAction;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  actor: string;
  created_at: Date;
}

export async function appendChangelog(
  db: Knex,
  tenantId: string,
  entityId: string,
  actor: string,
  action: ChangelogAction,
  changes: FieldChange[],
): Promise<void> {
  if (!changes.length) return;
  await db('entity_changelog').insert(
    changes.map((change) => ({
      tenant_id: tenantId,
      entity_id: entityId,
      action,
      field: change.field,
      old_value: change.oldValue,
      new_value: change.newValue,
      actor,
    })),
  );
}

const toEntry = (row: ChangelogRow): ChangelogEntry => ({
  id: String(row.id),
  timestamp: toIso(row.created_at),
  action: row.action,
  field: row.field,
  old_value: row.old_value,
  new_value: row.new_value,
  actor: row.actor,
});

const newestEntries = statement<ChangelogRow, { entityId: string; limit: number }>((q, { entityId, limit }) =>
  q('entity_changelog')
    .where({ entity_id: entityId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .select('id', 'action', 'field', 'old_value', 'new_value', 'actor', 'created_at'),
);

/** The newest `limit` entries, newest first. */
export async function listChangelog(db: Knex, entityId: string, limit: number): Promise<ChangelogEntry[]> {
  const rows = await newestEntries.rows(db, { entityId, limit });
  return rows.map(toEntry);
}

export interface EntityActivityItem {
  kind: 'audit' | 'changelog';
  eventType: string;
  actor: string;
  action: string;
  createdAt: string;
  status?: AuditStatus;
  field?: string | null;
  old_value?: string | null;
  new_value?: string | null;
}

/** What happened to an entity, newest first: its audit entries and its changelog, merged. */
export async function entityActivity(db: Knex, entityId: string, limit: number): Promise<EntityActivityItem[]> {
  const audit = await recentActivity(db, limit, { type: 'entity', id: entityId });
  const changes = await listChangelog(db, entityId, limit);
  const items: EntityActivityItem[] = [
    ...audit.map((item) => ({
      kind: 'audit' as const,
      eventType: item.eventType,
      actor: item.actor,
      action: item.action,
      status: item.status,
      createdAt: item.createdAt,
    })),
    ...changes.map((entry) => ({
      kind: 'changelog' as const,
      eventType: 'entity.field_changed',
      actor: entry.actor,
      action: entry.action,
      field: entry.field,
      old_value: entry.old_value,
      new_value: entry.new_value,
      createdAt: entry.timestamp,
    })),
  ];
  // ISO timestamps of one precision sort as text; the sort is stable, so ties keep audit first.
  return items.sort((a, b) => (a.createdAt === b.createdAt ? 0 : a.createdAt < b.createdAt ? 1 : -1)).slice(0, limit);
}
