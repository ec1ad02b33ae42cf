import type { Knex } from 'knex';
import { keysetStatement, type DirectedKeysetWindow, type KeysetOrder, type KeysetRow } from '../paging';
import { givenFilters, statement, whereGiven, type Placeholders } from '../../db/statements';
import { ownersOfTeamSql, type TeamColumn } from './ownerStore';
import { idOr } from '../ids';
import { entityColumns, projectEntity, toEntityView } from './entityStore';
import type { Grade } from '../scorecards/types';
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
  /** Entities whose latest scorecard has one of these grades (never-scored entities match none). */
  grades?: Grade[];
  /** Entities whose kept bus factor (entity_bus_factors) is this. */
  busFactor?: number;
}

type FilterValues = Required<Omit<EntityFilter, 'hasRelations'>>;

const EQUAL_COLUMNS = {
  type: 'e.type',
  lifecycle: 'e.lifecycle',
  owner: 'e.owner',
  tier: 'e.tier',
  source: 'e.source',
};

/** Which filters a request gives, which shapes the query (their values are bound to it). */
interface FilterShape {
  equal: (keyof typeof EQUAL_COLUMNS)[];
  team: TeamColumn | null;
  tags: boolean;
  search: boolean;
  manifestType: boolean;
  /** Whether entities must have relations (true) or have none (false); null: either. */
  hasRelations: boolean | null;
  grades: boolean;
  busFactor: boolean;
}

const filterShape = (filter: EntityFilter): FilterShape => ({
  equal: givenFilters(filter, EQUAL_COLUMNS),
  team: filter.team === undefined ? null : idOr(filter.team, 'slug'),
  tags: Boolean(filter.tags?.length),
  search: filter.search !== undefined,
  manifestType: filter.manifestType !== undefined,
  hasRelations: filter.hasRelations ?? null,
  grades: Boolean(filter.grades?.length),
  busFactor: filter.busFactor !== undefined,
});

/** The filtered entities, unordered (`e`). */
function filteredEntities(q: Knex, values: Placeholders<FilterValues>, shape: FilterShape): Knex.QueryBuilder {
  const query = whereGiven(q('entities as e'), EQUAL_COLUMNS, values, shape.equal);
  if (shape.team !== null) query.whereIn('e.owner', ownersOfTeamSql(q, values, shape.team));
  if (shape.tags) query.whereRaw('e.tags @> ?::text[]', [values.tags]);
  if (shape.search) {
    // starts_with on plain columns: leakproof, so row-level security lets the prefix indexes serve it.
    query.where((w) =>
      w
        .whereRaw('starts_with(e.name_lower, lower(?))', [values.search])
        .orWhereRaw('starts_with(e.service_id, lower(?))', [values.search]),
    );
  }
  if (shape.manifestType) {
    query.whereExists(q('manifests as m').whereRaw('m.entity_id = e.id').where('m.manifest_type', values.manifestType));
  }
  if (shape.grades) {
    query.whereExists(
      q('entity_scorecards as s').whereRaw('s.entity_id = e.id').whereRaw('s.grade = any(?::text[])', [values.grades]),
    );
  }
  if (shape.busFactor) {
    query.whereExists(
      q('entity_bus_factors as b').whereRaw('b.entity_id = e.id').where('b.bus_factor', values.busFactor),
    );
  }
  if (shape.hasRelations !== null) {
    const related = q
      .select(1)
      .from('entity_relations as r')
      .whereRaw('r.from_entity_id = e.id')
      .unionAll((to) => to.select(1).from('entity_relations as r').whereRaw('r.to_entity_id = e.id'));
    query[shape.hasRelations ? 'whereExists' : 'whereNotExists'](related);
  }
  return query;
}

const NAME_ORDER: KeysetOrder = {
  columns: [
    { column: 'e.name', kind: 'text' },
    { column: 'e.id', kind: 'uuid' },
  ],
  direction: 'asc',
};

interface ListShape {
  filter: FilterShape;
  fields: readonly EntityViewField[];
}

const entityPage = keysetStatement({
  order: NAME_ORDER,
  build: (q, values: Placeholders<FilterValues>, { filter, fields }: ListShape) =>
    filteredEntities(q, values, filter).select(entityColumns(q, fields)),
  toItem: (row: Partial<EntityView>) => row,
});

/**
 * A page of the filtered list in (name, id) order, each entity with only `fields` (and its id);
 * backward windows return the rows before the position, nearest first.
 */
export async function listEntities(
  db: Knex,
  filter: EntityFilter,
  fields: readonly EntityViewField[],
  window: DirectedKeysetWindow,
): Promise<KeysetRow<EntityProjection>[]> {
  // The shape binds only the filters given.
  const rows = await entityPage(db, window, filter as FilterValues, { filter: filterShape(filter), fields });
  return rows.map(({ id, item }) => ({ id, item: projectEntity(item, fields) }));
}

const entityCount = statement<{ count: string }, FilterValues, FilterShape>((q, values, shape) =>
  filteredEntities(q, values, shape).count('* as count'),
);

/** How many entities the filter matches: a count over the index the filter uses. */
export async function countEntities(db: Knex, filter: EntityFilter): Promise<number> {
  const [{ count }] = await entityCount.rows(db, filter as FilterValues, filterShape(filter));
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

type ZombieValues = Required<ZombieFilter>;

const ZOMBIE_COLUMNS = { lifecycle: 'e.lifecycle', type: 'e.type' };

/** The optional zombie filters a request gives. */
type ZombieShape = (keyof typeof ZOMBIE_COLUMNS)[];

const zombieShape = (filter: ZombieFilter): ZombieShape => givenFilters(filter, ZOMBIE_COLUMNS);

function zombies(q: Knex, values: Placeholders<ZombieValues>, shape: ZombieShape): Knex.QueryBuilder {
  const query = q('entities as e')
    .whereRaw('e.last_activity_at < now() - make_interval(days => ?)', [values.inactiveDays])
    .whereRaw('e.created_at < now() - make_interval(days => ?)', [values.minAge]);
  return whereGiven(query, ZOMBIE_COLUMNS, values, shape);
}

const ACTIVITY_ORDER: KeysetOrder = {
  columns: [
    { column: 'e.last_activity_at', kind: 'timestamp' },
    { column: 'e.id', kind: 'uuid' },
  ],
  direction: 'asc',
};

const zombiePage = keysetStatement({
  order: ACTIVITY_ORDER,
  build: (q, values: Placeholders<ZombieValues>, shape: ZombieShape) =>
    zombies(q, values, shape).select([
      ...entityColumns(q),
      q.raw('extract(day from now() - e.last_activity_at)::int as inactive_days'),
    ]),
  toItem: (row: Zombie): Zombie => ({ ...toEntityView(row), inactive_days: row.inactive_days }),
});

/** Entities without activity for `inactiveDays`, the longest inactive first. */
export function listZombies(
  db: Knex,
  filter: ZombieFilter,
  window: DirectedKeysetWindow,
): Promise<KeysetRow<Zombie>[]> {
  // The shape binds only the filters given.
  return zombiePage(db, window, filter as ZombieValues, zombieShape(filter));
}

const zombieCount = statement<{ count: string }, ZombieValues, ZombieShape>((q, values, shape) =>
  zombies(q, values, shape).count('* as count'),
);

export async function countZombies(db: Knex, filter: ZombieFilter): Promise<number> {
  const [{ count }] = await zombieCount.rows(db, filter as ZombieValues, zombieShape(filter));
  return Number(count);
}
