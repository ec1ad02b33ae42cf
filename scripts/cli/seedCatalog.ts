import type { Knex } from 'knex';
import { TIERS, type EntityType } from '../../core/catalog/types';
import type { Config } from '../../core/config';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { ensureTenant } from '../../core/auth/store';

// `shipyard seed`: a tenant filled with a believable catalog for demos and benchmarks. The data
// is a pure function of the entity's number, so a second run with the same counts adds nothing
// (rows already there are kept as they are) and a larger count adds only the new numbers.

export interface SeedRequest {
  tenant: string;
  entities: number;
  /** Teams that own entities; default one per 2,000 entities, at least 10. */
  teams?: number;
}

export interface SeedResult {
  tenantId: string;
  teams: number;
  entities: number;
  relations: number;
  seconds: number;
}

const DOMAINS = [
  'payments',
  'checkout',
  'billing',
  'search',
  'identity',
  'orders',
  'catalog',
  'shipping',
  'pricing',
  'inventory',
  'notifications',
  'analytics',
  'reviews',
  'accounts',
  'ledger',
  'fraud',
  'media',
  'support',
  'maps',
  'ads',
];
const PARTS = [
  'api',
  'service',
  'worker',
  'gateway',
  'store',
  'sync',
  'ui',
  'sdk',
  'pipeline',
  'model',
  'proxy',
  'cli',
  'scheduler',
  'indexer',
  'exporter',
  'importer',
];
const LANGUAGES = ['go', 'typescript', 'java', 'python', 'kotlin', 'rust', 'ruby', 'scala'];
const TAGS = ['pci', 'gdpr', 'customer-facing', 'internal', 'critical-path', 'batch', 'realtime', 'legacy'];
/** How often each type occurs, roughly as in a services-first company. */
const TYPE_WEIGHTS: Record<EntityType, number> = {
  service: 40,
  library: 15,
  api: 12,
  website: 5,
  tool: 5,
  infrastructure: 6,
  platform: 2,
  'mobile-app': 2,
  'data-pipeline': 6,
  'ml-model': 3,
  documentation: 4,
};
const BATCH = 5_000;

/** A small deterministic generator (mulberry32): the same seed gives the same catalog. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const weighted = <K extends string>(weights: Record<K, number>): K => {
    const entries = Object.entries(weights) as [K, number][];
    let left = next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [key, weight] of entries) if ((left -= weight) < 0) return key;
    return entries[0][0];
  };
  return { next, pick, weighted };
}

const teamSlug = (n: number) => `team-${String(n + 1).padStart(3, '0')}`;

/** Entity number `n`'s generator, past the picks of its service id. */
function entityNumber(n: number) {
  const r = random(n * 7919 + 1);
  const domain = r.pick(DOMAINS);
  const part = r.pick(PARTS);
  return { r, domain, part, serviceId: `${domain}-${part}-${n.toString(36)}` };
}

/** Entity number `n` as a row of the entities table. */
export function seededEntity(n: number, teams: number, now: number) {
  const { r, domain, part, serviceId } = entityNumber(n);
  const type = r.weighted(TYPE_WEIGHTS);
  const ownerRoll = r.next();
  const team = Math.floor(r.next() * teams);
  const daysAgo = (max: number) => Math.floor(r.next() * max) * 86_400_000;
  const created = now - daysAgo(900) - 86_400_000 * 30;
  // Most entities are active within a quarter; about one in eight has gone quiet for longer.
  const lastActivity = Math.max(created, now - (r.next() < 0.88 ? daysAgo(90) : daysAgo(700)));
  const tags = new Set([`lang:${r.pick(LANGUAGES)}`, r.pick(TAGS), ...(r.next() < 0.3 ? [r.pick(TAGS)] : [])]);
  return {
    service_id: serviceId,
    name: serviceId,
    type,
    lifecycle: r.weighted({ production: 60, development: 20, experimental: 10, deprecated: 10 }),
    owner: ownerRoll < 0.05 ? null : ownerRoll < 0.12 ? `dev${team}@${domain}.example` : teamSlug(team),
    description: r.next() < 0.15 ? null : `The ${domain} ${part}: a ${type} of the ${domain} domain.`,
    tier: r.next() < 0.1 ? null : r.pick(TIERS),
    // Joined for the bulk insert (no tag has a comma); split again in SQL.
    tags: [...tags].join(','),
    links: JSON.stringify([{ title: 'Repository', url: `https://source.example/${domain}/${serviceId}` }]),
    created_at: new Date(created).toISOString(),
    last_activity_at: new Date(lastActivity).toISOString(),
  };
}

/** What entity `n` depends on or belongs to: up to three earlier entities, by number. */
export function seededRelations(n: number): { type: 'depends_on' | 'part_of'; target: number }[] {
  if (n === 0) return [];
  const r = random(n * 104729 + 3);
  const relations: { type: 'depends_on' | 'part_of'; target: number }[] = [];
  const count = Math.floor(r.next() * 4);
  for (let i = 0; i < count; i++) relations.push({ type: 'depends_on', target: Math.floor(r.next() * n) });
  if (r.next() < 0.2) relations.push({ type: 'part_of', target: Math.floor(r.next() * Math.min(n, 200)) });
  return relations.filter((rel, i, all) => all.findIndex((o) => o.type === rel.type && o.target === rel.target) === i);
}

async function insertTeams(trx: Knex.Transaction, tenantId: string, teams: number): Promise<void> {
  const rows = Array.from({ length: teams }, (_, i) => ({
    tenant_id: tenantId,
    slug: teamSlug(i),
    name: `Team ${String(i + 1).padStart(3, '0')}`,
  }));
  await trx('teams').insert(rows).onConflict(['tenant_id', 'slug']).ignore();
}

/** One batch of entities through `unnest` (one statement, one round trip), then their relations. */
async function insertBatch(
  trx: Knex.Transaction,
  tenantId: string,
  from: number,
  to: number,
  teams: number,
  now: number,
) {
  const rows = Array.from({ length: to - from }, (_, i) => seededEntity(from + i, teams, now));
  // Null elements travel as SQL NULLs; knex's binding types know only arrays of one type.
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((row) => row[key]) as string[];
  const inserted = await trx.raw<{ rowCount: number }>(
    `insert into entities (tenant_id, service_id, name, type, lifecycle, owner, description, tier, tags, links,
                           source, created_at, updated_at, last_activity_at)
     select ?, s.service_id, s.name, s.type, s.lifecycle, s.owner, s.description, s.tier,
            string_to_array(s.tags, ','), s.links, 'manual', s.created_at, s.last_activity_at, s.last_activity_at
       from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
                   ?::jsonb[], ?::timestamptz[], ?::timestamptz[])
         as s(service_id, name, type, lifecycle, owner, description, tier, tags, links, created_at, last_activity_at)
     on conflict (tenant_id, service_id) do nothing`,
    [
      tenantId,
      column('service_id'),
      column('name'),
      column('type'),
      column('lifecycle'),
      column('owner'),
      column('description'),
      column('tier'),
      column('tags'),
      column('links'),
      column('created_at'),
      column('last_activity_at'),
    ],
  );
  const from_ids: string[] = [];
  const to_ids: string[] = [];
  const types: string[] = [];
  for (let n = from; n < to; n++) {
    for (const relation of seededRelations(n)) {
      from_ids.push(entityNumber(n).serviceId);
      to_ids.push(entityNumber(relation.target).serviceId);
      types.push(relation.type);
    }
  }
  const related = await trx.raw<{ rowCount: number }>(
    `insert into entity_relations (tenant_id, from_entity_id, to_entity_id, type)
     select ?, f.id, t.id, r.type
       from unnest(?::text[], ?::text[], ?::text[]) as r(from_id, to_id, type)
       join entities f on f.service_id = r.from_id
       join entities t on t.service_id = r.to_id
     on conflict do nothing`,
    [tenantId, from_ids, to_ids, types],
  );
  return { entities: inserted.rowCount, relations: related.rowCount };
}

export async function seedCatalog(config: Config, request: SeedRequest): Promise<SeedResult> {
  const started = Date.now();
  const teams = request.teams ?? Math.max(10, Math.ceil(request.entities / 2000));
  const limits = config.limits.database.maintenance;
  const app = createPool(config.database.appUrl, 2, { limits });
  const system = createPool(config.database.systemUrl, 1, { limits });
  const owner = createPool(config.database.ownerUrl, 1, { limits });
  try {
    const tenantId = await ensureTenant(app, system, request.tenant);
    await withTenant(app, tenantId, (trx) => insertTeams(trx, tenantId, teams));
    let entities = 0;
    let relations = 0;
    // One transaction per batch: a long seed shows progress and never holds one huge transaction.
    for (let from = 0; from < request.entities; from += BATCH) {
      const to = Math.min(request.entities, from + BATCH);
      const added = await withTenant(app, tenantId, (trx) => insertBatch(trx, tenantId, from, to, teams, started));
      entities += added.entities;
      relations += added.relations;
      // The next batch joins its relations to the entities by service_id. Planned with the
      // statistics of a table a batch ago (autovacuum lags a seed), or with the generic plan a
      // prepared statement takes after five runs, that join became a nested loop over seq scans
      // and a fresh 100k seed stalled for over 20 minutes at its sixth batch.
      if (added.entities > 0) await owner.raw('analyze entities');
    }
    // What autovacuum would do a little later: fresh statistics for the planner, and a visibility
    // map that lets counts and keyset pages read the indexes alone.
    await owner.raw('vacuum analyze entities, entity_relations');
    return { tenantId, teams, entities, relations, seconds: (Date.now() - started) / 1000 };
  } finally {
    await Promise.all([app.destroy(), system.destroy(), owner.destroy()]);
  }
}
