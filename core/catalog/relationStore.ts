import type { Knex } from 'knex';
import { UUID } from '../ids';
import { statement } from '../../db/statements';
import type { RelationRef } from './entityRules';
import { INVERSE_RELATION_NAMES, type EntityType, type InverseRelationName, type RelationType } from './types';

// Relations between entities of one tenant. A relation is one row (from, type, to), read from
// either end: outgoing through the primary key, incoming through entity_relations_to.

/** An entity as a relation, topology node or quick reference shows it. */
export interface EntityRef {
  id: string;
  service_id: string;
  name: string;
  type: EntityType;
}

const entitiesByIdOrServiceId = statement<EntityRef, { ids: string[]; serviceIds: string[] }>(
  (q, { ids, serviceIds }) =>
    q('entities')
      .where((w) => w.whereRaw('id = any(?)', [ids]).orWhereRaw('service_id = any(?)', [serviceIds]))
      .select('id', 'service_id', 'name', 'type'),
);

/**
 * The entities that `refs` (ids or service ids) name in this tenant, keyed by the ref as given.
 * A ref missing from the result names no entity the caller can see.
 */
export async function resolveEntityRefs(db: Knex, refs: string[]): Promise<Map<string, EntityRef>> {
  if (!refs.length) return new Map();
  const ids = refs.filter((ref) => UUID.test(ref)).map((ref) => ref.toLowerCase());
  const serviceIds = refs.filter((ref) => !UUID.test(ref));
  const rows = await entitiesByIdOrServiceId.rows(db, { ids, serviceIds });
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

const outgoingRefs = statement<RelationRef, { entityId: string }>((q, { entityId }) =>
  q('entity_relations as r')
    .join('entities as t', 't.id', 'r.to_entity_id')
    .where('r.from_entity_id', entityId)
    .select('r.type', 't.service_id as target'),
);

/** The entity's outgoing relations, targets by service id (as the changelog records them). */
export async function outgoingRelationRefs(db: Knex, entityId: string): Promise<RelationRef[]> {
  return outgoingRefs.rows(db, { entityId });
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

export type RelationDirection = 'outgoing' | 'incoming';

export interface RelationItem {
  /** Outgoing: the stored type; incoming: its inverse name (INVERSE_RELATION_NAMES). */
  type: RelationType | InverseRelationName;
  direction: RelationDirection;
  entity: EntityRef;
}

const relationsOfEntity = statement<
  Omit<EntityRef, 'type'> & {
    direction: RelationDirection;
    type: RelationType;
    entity_type: EntityType;
    total: string;
  },
  { entityId: string; limit: number }
>((q, { entityId, limit }) => {
  const end = (direction: RelationDirection, near: string, far: string) =>
    q
      .from('entity_relations as r')
      .join('entities as o', 'o.id', `r.${far}`)
      .where(`r.${near}`, entityId)
      .select(
        q.raw('? as direction', [direction]),
        'r.type',
        'o.id',
        'o.service_id',
        'o.name',
        'o.type as entity_type',
      );
  const both = end('outgoing', 'from_entity_id', 'to_entity_id').unionAll(
    end('incoming', 'to_entity_id', 'from_entity_id'),
  );
  return q
    .from(both.as('x'))
    .select('x.*', q.raw('count(*) over () as total'))
    .orderBy([{ column: 'direction', order: 'desc' }, { column: 'type' }, { column: 'name' }, { column: 'id' }])
    .limit(limit);
});

/** The entity's relations from both ends, outgoing first, then by type and the other end's name. */
export async function listRelations(
  db: Knex,
  entityId: string,
  limit: number,
): Promise<{ relations: RelationItem[]; total: number }> {
  const rows = await relationsOfEntity.rows(db, { entityId, limit });
  return {
    total: Number(rows[0]?.total ?? 0),
    relations: rows.map((row) => ({
      type: row.direction === 'outgoing' ? row.type : INVERSE_RELATION_NAMES[row.type],
      direction: row.direction,
      entity: { id: row.id, service_id: row.service_id, name: row.name, type: row.entity_type },
    })),
  };
}

interface RelationRow {
  from_entity_id: string;
  to_entity_id: string;
  type: RelationType;
}

export interface TopologyEdge {
  from: string;
  to: string;
  type: RelationType;
}

export interface Topology {
  nodes: (EntityRef & { depth: number })[];
  edges: TopologyEdge[];
  /** True when the graph within `depth` had more than `maxNodes` entities; the rest is left out. */
  truncated: boolean;
}

const relationsTouching = statement<RelationRow, { ids: string[] }>((q, { ids }) =>
  q
    .from('entity_relations')
    .whereRaw('from_entity_id = any(?)', [ids])
    .orWhereRaw('to_entity_id = any(?)', [ids])
    .select('from_entity_id', 'to_entity_id', 'type'),
);

const relationsAmong = statement<RelationRow, { ids: string[] }>((q, { ids }) =>
  q
    .from('entity_relations')
    .whereRaw('from_entity_id = any(?)', [ids])
    .whereRaw('to_entity_id = any(?)', [ids])
    .select('from_entity_id', 'to_entity_id', 'type'),
);

const entitiesByIds = statement<EntityRef, { ids: string[] }>((q, { ids }) =>
  q('entities').whereRaw('id = any(?)', [ids]).select('id', 'service_id', 'name', 'type'),
);

/**
 * The entities within `depth` relations of `rootId` (either direction) and the relations among
 * them. Read level by level (one query per level, not per entity); an entity is visited once, at
 * its nearest depth, so a cycle never repeats a node or an edge.
 */
export async function topologyAround(db: Knex, rootId: string, depth: number, maxNodes: number): Promise<Topology> {
  const depthOf = new Map<string, number>([[rootId, 0]]);
  const edges = new Map<string, TopologyEdge>();
  const addEdge = (row: RelationRow) =>
    edges.set(`${row.from_entity_id} ${row.type} ${row.to_entity_id}`, {
      from: row.from_entity_id,
      to: row.to_entity_id,
      type: row.type,
    });
  let frontier = [rootId];
  let truncated = false;
  for (let level = 1; level <= depth && frontier.length; level++) {
    const rows = await relationsTouching.rows(db, { ids: frontier });
    const next: string[] = [];
    for (const row of rows) {
      for (const id of [row.from_entity_id, row.to_entity_id]) {
        if (depthOf.has(id)) continue;
        if (depthOf.size >= maxNodes) {
          truncated = true;
          continue;
        }
        depthOf.set(id, level);
        next.push(id);
      }
      if (depthOf.has(row.from_entity_id) && depthOf.has(row.to_entity_id)) addEdge(row);
    }
    frontier = next;
  }
  // Relations between two entities of the last level touch no earlier level's entity.
  if (frontier.length) {
    const among = await relationsAmong.rows(db, { ids: frontier });
    among.forEach(addEdge);
  }
  const entities = await entitiesByIds.rows(db, { ids: [...depthOf.keys()] });
  const nodes = entities
    .map((entity) => ({ ...entity, depth: depthOf.get(entity.id) as number }))
    .sort((a, b) => a.depth - b.depth || a.name.localeCompare(b.name));
  return { nodes, edges: [...edges.values()], truncated };
}
