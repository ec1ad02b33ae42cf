import type { Knex } from 'knex';
import { UUID } from '../ids';
import type { RelationRef } from './entityRules';
import type { EntityType, RelationType } from './types';

// Relations between entities of one tenant. A relation is one row (from, type, to), read from
// either end: outgoing through the primary key, incoming through entity_relations_to.

/** An entity as a relation, topology node or quick reference shows it. */
export interface EntityRef {
  id: string;
  service_id: string;
  name: string;
  type: EntityType;
}

/**
 * The entities that `refs` (ids or service ids) name in this tenant, keyed by the ref as given.
 * A ref missing from the result names no entity the caller can see.
 */
export async function resolveEntityRefs(db: Knex, refs: string[]): Promise<Map<string, EntityRef>> {
  if (!refs.length) return new Map();
  const ids = refs.filter((ref) => UUID.test(ref)).map((ref) => ref.toLowerCase());
  const serviceIds = refs.filter((ref) => !UUID.test(ref));
  const rows: EntityRef[] = await db('entities')
    .where((q) => q.whereIn('id', ids).orWhereIn('service_id', serviceIds))
    .select('id', 'service_id', 'name', 'type');
  const byRef = new Map<string, EntityRef>();
  for (const row of rows) {
    byRef.set(row.id, row);
    byRef.set(row.service_id, row);
  }
  return new Map(
    refs.flatMap((ref) => {
      const entity = byRef.get(UUID.test(ref) ? ref.toLowerCase() : ref);
      return entity ? [[ref, entity] as const] : [];
    }),
  );
}

/** The entity's outgoing relations, targets by service id (as the changelog records them). */
export async function outgoingRelationRefs(db: Knex, entityId: string): Promise<RelationRef[]> {
  return db('entity_relations as r')
    .join('entities as t', 't.id', 'r.to_entity_id')
    .where('r.from_entity_id', entityId)
    .select('r.type', 't.service_id as target');
}

/** Makes `relations` the entity's outgoing relations: drops the others, keeps the ones it has. */
export async function replaceOutgoingRelations(
  db: Knex,
  tenantId: string,
  entityId: string,
  relations: { type: RelationType; toId: string }[],
): Promise<void> {
  await db('entity_relations').where({ from_entity_id: entityId }).del();
  if (!relations.length) return;
  await db('entity_relations')
    .insert(
      relations.map((r) => ({ tenant_id: tenantId, from_entity_id: entityId, to_entity_id: r.toId, type: r.type })),
    )
    .onConflict(['from_entity_id', 'type', 'to_entity_id'])
    .ignore();
}
