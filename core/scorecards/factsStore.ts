import type { Knex } from 'knex';
import type { EntityFacts } from './checks';
import { FINDING_SEVERITIES } from './types';

// What the checks read about a batch of entities, in one statement: every fact is a column of
// the entity or an index lookup beside it (links to crawled repositories, deprecated
// dependencies, the latest workload sighting, the worst open finding, the kept bus factor), never a query per
// entity. Findings the scorecards opened themselves are left out: a failing rule would otherwise
// fail the security rule too, one scoring later.

export interface EntityFactsRow extends EntityFacts {
  id: string;
  /** The entity's updated_at when read: the version the score is of. */
  version: Date;
}

export const FACTS_SQL = `
  select e.id, e.owner, e.description, e.tier, e.lifecycle, e.tags, e.updated_at as version,
    jsonb_array_length(e.links) as link_count,
    coalesce(e.readme, '') <> '' as has_readme,
    exists (
      select 1 from jsonb_array_elements(e.links) as l
      join repositories r on r.tenant_id = e.tenant_id and r.html_url = l->>'url'
      join doc_crawl_status d on d.repository_id = r.id
    ) as has_crawled_docs,
    array(
      select t.service_id from entity_relations rel join entities t on t.id = rel.to_entity_id
      where rel.from_entity_id = e.id and rel.type = 'depends_on' and t.lifecycle = 'deprecated'
      order by t.service_id
    ) as deprecated_dependencies,
    (select max(w.last_seen_at) from k8s_workloads w where w.entity_id = e.id) as last_workload_seen_at,
    (select f.severity from security_findings f
      where f.entity_id = e.id and f.status in ('open', 'acknowledged') and f.source <> 'scorecard'
      order by array_position(array[${FINDING_SEVERITIES.map((severity) => `'${severity}'`).join(', ')}], f.severity)
      limit 1
    ) as worst_open_finding,
    (select b.bus_factor from entity_bus_factors b where b.entity_id = e.id) as bus_factor
  from entities e`;

interface FactsRecord {
  id: string;
  owner: string | null;
  description: string | null;
  tier: string | null;
  lifecycle: string | null;
  tags: string[];
  version: Date;
  link_count: number;
  has_readme: boolean;
  has_crawled_docs: boolean;
  deprecated_dependencies: string[];
  last_workload_seen_at: Date | null;
  worst_open_finding: EntityFacts['worstOpenFinding'];
  bus_factor: number | null;
}

const toFacts = (row: FactsRecord): EntityFactsRow => ({
  id: row.id,
  owner: row.owner,
  description: row.description,
  tier: row.tier,
  lifecycle: row.lifecycle,
  tags: row.tags,
  version: row.version,
  linkCount: row.link_count,
  hasReadme: row.has_readme,
  hasCrawledDocs: row.has_crawled_docs,
  deprecatedDependencies: row.deprecated_dependencies,
  lastWorkloadSeenAt: row.last_workload_seen_at,
  worstOpenFinding: row.worst_open_finding,
  busFactor: row.bus_factor,
});

/** The facts of the listed entities that still exist (a deleted one drops out). */
export async function factsOf(db: Knex, ids: string[]): Promise<EntityFactsRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.raw<{ rows: FactsRecord[] }>(`${FACTS_SQL} where e.id = any(?::uuid[])`, [ids]);
  return rows.map(toFacts);
}

/** The next `limit` entity ids after `afterId` in id order (a full pass's batch). */
export const entityIdsAfter = (db: Knex, afterId: string | null, limit: number): Promise<string[]> =>
  db('entities')
    .whereRaw('tenant_id = app_current_tenant()')
    .where('id', '>', afterId ?? '00000000-0000-0000-0000-000000000000')
    .orderBy('id')
    .limit(limit)
    .pluck('id');
