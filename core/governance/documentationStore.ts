import type { Knex } from 'knex';
import { statement } from '../../db/statements';

// Documentation coverage and freshness (GET /governance/documentation). An entity is documented
// when it has a README of its own (from the API or its manifest) or links to a repository the
// crawler has crawled (whose README and docs/ it serves at /entities/{id}/docs). Freshness
// buckets the documented entities by their last change (`updated_at`, which a README change moves).

const FRESH_DAYS = 30;
const STALE_DAYS = 90;

interface CoverageRow {
  total: string;
  with_readme: string;
  with_repository_docs: string;
  documented: string;
  fresh: string;
  aging: string;
  stale: string;
}

const DOCUMENTED = '(has_readme or has_repository_docs)';

/** Entities linking to a crawled repository: one hash join of links to repositories, not a lookup per entity. */
const withRepositoryDocs = (q: Knex) =>
  q
    .from(q.raw('entities as e cross join lateral jsonb_array_elements(e.links) as link'))
    .join('repositories as r', (on) => on.on('r.html_url', q.raw(`link->>'url'`)).andOnVal('r.crawl_status', 'crawled'))
    .distinct('e.id as entity_id');

const coverage = statement<CoverageRow>((q) =>
  q
    .from(
      q('entities as e')
        .leftJoin(withRepositoryDocs(q).as('docs'), 'docs.entity_id', 'e.id')
        .select(
          'e.updated_at',
          q.raw('e.readme is not null as has_readme'),
          q.raw('docs.entity_id is not null as has_repository_docs'),
        )
        .as('d'),
    )
    .select(
      q.raw('count(*) as total'),
      q.raw('count(*) filter (where has_readme) as with_readme'),
      q.raw('count(*) filter (where has_repository_docs) as with_repository_docs'),
      q.raw(`count(*) filter (where ${DOCUMENTED}) as documented`),
      q.raw(`count(*) filter (where ${DOCUMENTED} and updated_at >= now() - interval '${FRESH_DAYS} days') as fresh`),
      q.raw(
        `count(*) filter (where ${DOCUMENTED} and updated_at < now() - interval '${FRESH_DAYS} days'
           and updated_at >= now() - interval '${STALE_DAYS} days') as aging`,
      ),
      q.raw(`count(*) filter (where ${DOCUMENTED} and updated_at < now() - interval '${STALE_DAYS} days') as stale`),
    ),
);

export interface DocumentationCoverage {
  total_entities: number;
  documented: number;
  undocumented: number;
  /** documented / total_entities, 0-100 to one decimal; 0 when there are no entities. */
  coverage_percent: number;
  with_readme: number;
  with_repository_docs: number;
  /** Documented entities by their last change: < 30 days, 30-90 days, > 90 days. */
  freshness: { fresh: number; aging: number; stale: number };
}

export async function documentationCoverage(db: Knex): Promise<DocumentationCoverage> {
  const [row] = await coverage.rows(db);
  const total = Number(row.total);
  const documented = Number(row.documented);
  return {
    total_entities: total,
    documented,
    undocumented: total - documented,
    coverage_percent: total === 0 ? 0 : Math.round((documented / total) * 1000) / 10,
    with_readme: Number(row.with_readme),
    with_repository_docs: Number(row.with_repository_docs),
    freshness: { fresh: Number(row.fresh), aging: Number(row.aging), stale: Number(row.stale) },
  };
}
