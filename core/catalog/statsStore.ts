import type { Knex } from 'knex';
import { ENTITY_TYPES, LIFECYCLES, TIERS, type EntityType, type Lifecycle, type Tier } from './types';

// Catalog statistics: counts over the tenant's entities, each one scan of an index that holds the
// columns it reads (see the catalog migrations), except languages, which unnest every entity's tags.

/** The key an unset lifecycle or tier is counted under. */
export const UNSET = 'none';

export interface EntityCounts {
  total_entities: number;
  by_type: Record<EntityType, number>;
  by_lifecycle: Record<Lifecycle | typeof UNSET, number>;
  by_tier: Record<Tier | typeof UNSET, number>;
}

const zeros = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;

/** Counts by type, lifecycle and tier (every value, zeros included) and the total, in one scan. */
export async function entityCounts(db: Knex): Promise<EntityCounts> {
  const { rows } = await db.raw<{
    rows: { type: string | null; lifecycle: string | null; tier: string | null; level: number; n: string }[];
  }>(
    `select type, lifecycle, tier, grouping(type, lifecycle, tier) as level, count(*) as n
       from entities group by grouping sets ((type), (lifecycle), (tier), ())`,
  );
  const counts: EntityCounts = {
    total_entities: 0,
    by_type: zeros(ENTITY_TYPES),
    by_lifecycle: zeros([...LIFECYCLES, UNSET]),
    by_tier: zeros([...TIERS, UNSET]),
  };
  // grouping() sets a bit per column left out of the row's grouping: type 4, lifecycle 2, tier 1.
  for (const row of rows) {
    const n = Number(row.n);
    if (row.level === 0b011) counts.by_type[row.type as EntityType] = n;
    else if (row.level === 0b101) counts.by_lifecycle[(row.lifecycle ?? UNSET) as Lifecycle] = n;
    else if (row.level === 0b110) counts.by_tier[(row.tier ?? UNSET) as Tier] = n;
    else counts.total_entities = n;
  }
  return counts;
}

/** A tag `lang:<language>` says the entity is written in that language (lowercased). */
export const LANGUAGE_TAG_PREFIX = 'lang:';

/** Entities per language, from their `lang:` tags; most used first. */
export async function entitiesPerLanguage(db: Knex): Promise<{ language: string; entities: number }[]> {
  const { rows } = await db.raw<{ rows: { language: string; entities: string }[] }>(
    `select lower(substr(tag, ?)) as language, count(distinct e.id) as entities
       from entities e, unnest(e.tags) as tag
      where tag like ? and length(tag) > ?
      group by 1 order by 2 desc, 1`,
    [LANGUAGE_TAG_PREFIX.length + 1, `${LANGUAGE_TAG_PREFIX}%`, LANGUAGE_TAG_PREFIX.length],
  );
  return rows.map((row) => ({ language: row.language, entities: Number(row.entities) }));
}

export interface UnownedCounts {
  /** Entities without an owner. */
  unowned: number;
  /** Entities whose owner names no team (by slug) and no user (by email) of the tenant. */
  unknown_owner: number;
  /** The unowned entities by type. */
  by_type: Record<EntityType, number>;
}

export async function unownedCounts(db: Knex): Promise<UnownedCounts> {
  // Counted per owner first (an index-only scan of entities_by_owner), so the owner lookups run
  // once per distinct owner, not per entity.
  const { rows } = await db.raw<{ rows: { type: string; unowned: string; unknown_owner: string }[] }>(
    `with per_owner as (select owner, type, count(*) as n from entities group by owner, type)
     select p.type,
            coalesce(sum(p.n) filter (where p.owner is null), 0) as unowned,
            coalesce(sum(p.n) filter (where p.owner is not null
              and not exists (select 1 from teams t where t.slug = p.owner)
              and not exists (select 1 from users u where u.email = p.owner)), 0) as unknown_owner
       from per_owner p group by p.type`,
  );
  const counts: UnownedCounts = { unowned: 0, unknown_owner: 0, by_type: zeros(ENTITY_TYPES) };
  for (const row of rows) {
    counts.unowned += Number(row.unowned);
    counts.unknown_owner += Number(row.unknown_owner);
    counts.by_type[row.type as EntityType] = Number(row.unowned);
  }
  return counts;
}
