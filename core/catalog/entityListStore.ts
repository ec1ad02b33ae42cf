import type { Knex } from 'knex';
import { keysetSelect, type KeysetOrder, type KeysetRow, type KeysetWindow } from '../paging';
import { ownersOfTeamSql } from './ownerStore';
import { entityColumns, projectEntity, toEntityView } from './entityStore';
import type {
  EntityProjection,
  EntitySource,
  EntityType,
  EntityView,
  EntityViewField,
  Lifecycle,
  ManifestType,
  Tier,
} from './types';

// The entity lists: GET /entities (filtered, name order) and GET /entities/zombies (least
// recently active first). Both page by keyset, so a deep page costs what the first does: a
// range scan of the index that matches the filter and the order (see the catalog migration).

export interface EntityFilter {
  type?: EntityType;
  lifecycle?: Lifecycle;
  owner?: string;
  /** A team's slug or id: entities whose owner is the team's slug or one of its members' emails. */
  team?: string;
  tier?: Tier;
  /** Entities that carry every one of these tags. */
  tags?: string[];
  /** A prefix of the name or the service id, in any case. */
  search?: string;
  source?: EntitySource;
  manifestType?: ManifestType;
  hasRelations?: boolean;
}

/** A keyset window that may run backwards (towards the start), for shape A's prevCursor. */
export interface DirectedKeysetWindow extends KeysetWindow {
  backward: boolean;
}

/** The filtered entities, unordered (`e`). */
function filteredEntities(db: Knex, filter: EntityFilter): Knex.QueryBuilder {
  const query = db('entities as e');
  for (const column of ['type', 'lifecycle', 'owner', 'tier', 'source'] as const) {
    if (filter[column] !== undefined) query.where(`e.${column}`, filter[column]);
  }
  if (filter.team !== undefined) query.whereIn('e.owner', ownersOfTeamSql(db, filter.team));
  if (filter.tags?.length) query.whereRaw('e.tags @> ?::text[]', [filter.tags]);
  const { search } = filter;
  if (search !== undefined) {
    // starts_with on plain columns: leakproof, so row-level security lets the prefix indexes serve it.
    query.where((q) =>
      q
        .whereRaw('starts_with(e.name_lower, lower(?))', [search])
        .orWhereRaw('starts_with(e.service_id, lower(?))', [search]),
    );
  }
  if (filter.manifestType !== undefined) {
    query.whereExists(
      db('manifests as m').whereRaw('m.entity_id = e.id').where('m.manifest_type', filter.manifestType),
    );
  }
  if (filter.hasRelations !== undefined) {
    const related = db
      .select(1)
      .from('entity_relations as r')
      .whereRaw('r.from_entity_id = e.id')
      .unionAll((q) => q.select(1).from('entity_relations as r').whereRaw('r.to_entity_id = e.id'));
    query[filter.hasRelations ? 'whereExists' : 'whereNotExists'](related);
  }
  return query;
}

const directed = (order: KeysetOrder, window: DirectedKeysetWindow): KeysetOrder => ({
  columns: order.columns,
  direction: window.backward ? 'desc' : 'asc',
});

const NAME_ORDER: KeysetOrder = {
  columns: [
    { column: 'e.name', kind: 'text' },
    { column: 'e.id', kind: 'uuid' },
  ],
  direction: 'asc',
};

/**
 * A page of the filtered list in (name, id) order, each entity with only `fields` (and its id);
 * backward windows return the rows before the position, nearest first.
 */
export function listEntities(
  db: Knex,
  filter: EntityFilter,
  fields: readonly EntityViewField[],
  window: DirectedKeysetWindow,
): Promise<KeysetRow<EntityProjection>[]> {
  const query = filteredEntities(db, filter).select(entityColumns(db, fields));
  return keysetSelect(db, query, directed(NAME_ORDER, window), window, (row: Partial<EntityView>) =>
    projectEntity(row, fields),
  );
}

/** How many entities the filter matches: a count over the index the filter uses. */
export async function countEntities(db: Knex, filter: EntityFilter): Promise<number> {
  const [{ count }] = await filteredEntities(db, filter).count<{ count: string }[]>('* as count');
  return Number(count);
}

export interface ZombieFilter {
  /** No write for this many days. */
  inactiveDays: number;
  /** Created at least this many days ago. */
  minAge: number;
  lifecycle?: Lifecycle;
  type?: EntityType;
}

export type Zombie = EntityView & { inactive_days: number };

function zombies(db: Knex, filter: ZombieFilter): Knex.QueryBuilder {
  return db('entities as e')
    .whereRaw('e.last_activity_at < now() - make_interval(days => ?)', [filter.inactiveDays])
    .whereRaw('e.created_at < now() - make_interval(days => ?)', [filter.minAge])
    .modify((q) => {
      if (filter.lifecycle !== undefined) q.where('e.lifecycle', filter.lifecycle);
      if (filter.type !== undefined) q.where('e.type', filter.type);
    });
}

const ACTIVITY_ORDER: KeysetOrder = {
  columns: [
    { column: 'e.last_activity_at', kind: 'timestamp' },
    { column: 'e.id', kind: 'uuid' },
  ],
  direction: 'asc',
};

/** Entities without activity for `inactiveDays`, the longest inactive first. */
export function listZombies(
  db: Knex,
  filter: ZombieFilter,
  window: DirectedKeysetWindow,
): Promise<KeysetRow<Zombie>[]> {
  const query = zombies(db, filter).select([
    ...entityColumns(db),
    db.raw('extract(day from now() - e.last_activity_at)::int as inactive_days'),
  ]);
  return keysetSelect(
    db,
    query,
    directed(ACTIVITY_ORDER, window),
    window,
    (row: EntityView & { inactive_days: number }) => ({
      ...toEntityView(row),
      inactive_days: row.inactive_days,
    }),
  );
}

export async function countZombies(db: Knex, filter: ZombieFilter): Promise<number> {
  const [{ count }] = await zombies(db, filter).count<{ count: string }[]>('* as count');
  return Number(count);
}
