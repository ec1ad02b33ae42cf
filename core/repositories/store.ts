import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import type { SourceHostRepository } from '../sourceHost/client';
import type { RepositoryFilters, RepositoryView } from './types';

// SQL for repositories and the crawl's tracking rows. Everything runs in the caller's tenant
// transaction (RLS), except the fallback tick's look across tenants (tenantsToCrawl).

export interface RepositoryRow extends SourceHostRepository {
  id: string;
  tenant_id: string;
  integration_id: string;
  provider: 'vcs-host-a';
  crawl_status: 'pending' | 'crawled' | 'failed';
  crawl_error: string | null;
  next_crawl_at: Date;
  last_crawled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A documentation file the crawler has seen: where it is and which content the engine holds. */
export interface DocStatusRow {
  id: string;
  repository_id: string;
  path: string;
  content_hash: string;
  indexed: boolean;
}

const HOST_FIELDS = [
  'full_name',
  'owner',
  'name',
  'description',
  'language',
  'topics',
  'fork',
  'archived',
  'private',
  'default_branch',
  'html_url',
] as const satisfies readonly (keyof SourceHostRepository)[];

export function toRepositoryView(row: RepositoryRow): RepositoryView {
  return {
    id: row.id,
    provider: row.provider,
    full_name: row.full_name,
    owner: row.owner,
    name: row.name,
    description: row.description,
    language: row.language,
    topics: row.topics,
    fork: row.fork,
    archived: row.archived,
    private: row.private,
    default_branch: row.default_branch,
    html_url: row.html_url,
    crawl_status: row.crawl_status,
    crawl_error: row.crawl_error,
    last_crawled_at: toIsoOrNull(row.last_crawled_at),
    next_crawl_at: toIso(row.next_crawl_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * Brings the tenant's repositories of one integration in line with what the host listed: new
 * ones are added (due for a crawl at once), changed ones updated (only when something changed,
 * so an unchanged listing writes nothing and indexes nothing), and those the host no longer
 * lists are removed with their tracking rows. Returns the ids of the tracking rows removed,
 * whose documents the caller deletes from the engine.
 */
export async function syncRepositories(
  trx: Knex,
  tenantId: string,
  integrationId: string,
  listed: SourceHostRepository[],
): Promise<{ removedDocIds: string[] }> {
  if (listed.length) {
    const rows = listed.map((repository) => ({
      tenant_id: tenantId,
      integration_id: integrationId,
      provider: 'vcs-host-a',
      ...Object.fromEntries(HOST_FIELDS.map((field) => [field, repository[field]])),
    }));
    const changed = HOST_FIELDS.map((field) => `repositories.${field} is distinct from excluded.${field}`).join(' or ');
    const fromHost = Object.fromEntries(
      [...HOST_FIELDS, 'integration_id'].map((field) => [field, trx.raw('??', [`excluded.${field}`])]),
    );
    await trx('repositories')
      .insert(rows)
      .onConflict(['tenant_id', 'full_name'])
      .merge({ ...fromHost, updated_at: trx.fn.now() })
      .whereRaw(`${changed} or repositories.integration_id is distinct from excluded.integration_id`);
  }
  const gone = trx('repositories')
    .where({ integration_id: integrationId })
    .whereNotIn(
      'full_name',
      listed.map((repository) => repository.full_name),
    );
  const removedDocIds: string[] = await trx('doc_crawl_status')
    .whereIn('repository_id', gone.clone().select('id'))
    .pluck('id');
  await gone.delete();
  return { removedDocIds };
}

/** The repositories whose next crawl is due, oldest due first. */
export function dueRepositoryIds(trx: Knex, limit: number): Promise<string[]> {
  return trx('repositories')
    .where('next_crawl_at', '<=', trx.fn.now())
    .orderBy([{ column: 'next_crawl_at' }, { column: 'id' }])
    .limit(limit)
    .pluck('id');
}

export async function getRepository(trx: Knex, id: string): Promise<RepositoryRow | undefined> {
  return trx('repositories').where({ id }).first();
}

export function docStatuses(trx: Knex, repositoryId: string): Promise<DocStatusRow[]> {
  return trx('doc_crawl_status')
    .where({ repository_id: repositoryId })
    .select('id', 'repository_id', 'path', 'content_hash', 'indexed');
}

/** Records files as indexed with their content hash (`id`: the document's id in the engine). */
export async function recordIndexedDocs(
  trx: Knex,
  tenantId: string,
  repositoryId: string,
  files: { id: string; path: string; content_hash: string }[],
): Promise<void> {
  if (!files.length) return;
  await trx('doc_crawl_status')
    .insert(files.map((file) => ({ tenant_id: tenantId, repository_id: repositoryId, ...file, indexed: true })))
    .onConflict(['repository_id', 'path'])
    .merge({ content_hash: trx.raw('excluded.content_hash'), indexed: true, crawled_at: trx.fn.now() });
}

export async function deleteDocStatuses(trx: Knex, ids: string[]): Promise<void> {
  if (ids.length) await trx('doc_crawl_status').whereIn('id', ids).delete();
}

/** The outcome of a repository's crawl and when it is due again. */
export async function recordCrawl(
  trx: Knex,
  id: string,
  outcome: { status: 'crawled' | 'failed'; error: string | null; nextCrawlInMs: number },
): Promise<void> {
  await trx('repositories')
    .where({ id })
    .update({
      crawl_status: outcome.status,
      crawl_error: outcome.error,
      last_crawled_at: trx.fn.now(),
      next_crawl_at: trx.raw(`now() + ? * interval '1 millisecond'`, [outcome.nextCrawlInMs]),
    });
}

/**
 * The recrawl's reset (spec, POST /admin/recrawl steps 1 and 2): the tenant's documents, or
 * those of the named repositories, are marked not indexed, and the repositories are due now.
 * `documents` counts only rows that were indexed, so an immediate second call resets none.
 */
export async function resetForRecrawl(
  trx: Knex,
  fullNames: string[] | undefined,
): Promise<{ documents: number; repositories: number }> {
  const repositories = trx('repositories');
  if (fullNames) repositories.whereIn('full_name', fullNames);
  const documents = await trx('doc_crawl_status')
    .where({ indexed: true })
    .whereIn('repository_id', repositories.clone().select('id'))
    .update({ indexed: false });
  const due = await repositories.update({ next_crawl_at: trx.fn.now(), crawl_status: 'pending' });
  return { documents, repositories: due };
}

/** The tenants whose repositories the fallback tick crawls: those with an active vcs-host-a integration. */
export function tenantsToCrawl(system: Knex): Promise<string[]> {
  return system('integrations')
    .where({ type: 'vcs-host-a', status: 'active' })
    .distinct('tenant_id')
    .pluck('tenant_id');
}

const SORT_COLUMNS = {
  name: 'name',
  full_name: 'full_name',
  created: 'created_at',
  updated: 'updated_at',
  last_crawled: 'last_crawled_at',
  language: 'language',
} as const;
export const REPOSITORY_SORTS = Object.keys(SORT_COLUMNS) as (keyof typeof SORT_COLUMNS)[];

/** The filtered, sorted page of the tenant's repositories and the filtered total. */
export async function listRepositories(
  trx: Knex,
  filters: RepositoryFilters,
  window: OffsetWindow,
): Promise<{ rows: RepositoryRow[]; total: number }> {
  const query = trx('repositories as r');
  if (filters.search) {
    const pattern = `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query.where((q) => q.whereILike('r.full_name', pattern).orWhereILike('r.description', pattern));
  }
  if (filters.provider) query.where('r.provider', filters.provider);
  if (filters.owner) query.where('r.owner', filters.owner);
  if (filters.language) query.whereRaw('lower(r.language) = lower(?)', [filters.language]);
  if (filters.topic) query.whereRaw('? = any(r.topics)', [filters.topic]);
  if (filters.team) {
    // A repository belongs to the team that owns an entity linking to it.
    query.whereExists((q) =>
      q
        .select(trx.raw('1'))
        .from('entities as e')
        .where('e.owner', filters.team!)
        .whereRaw(`e.links @> jsonb_build_array(jsonb_build_object('url', r.html_url))`),
    );
  }
  if (!filters.show_forks) query.where('r.fork', false);
  if (!filters.show_archived) query.where('r.archived', false);
  if (!filters.show_private) query.where('r.private', false);
  const [{ count }] = await query.clone().count<{ count: string }[]>('* as count');
  const column = `r.${SORT_COLUMNS[filters.sort]}`;
  const rows: RepositoryRow[] = await query
    .select('r.*')
    .orderByRaw(`${column} ${filters.order} nulls last, r.id ${filters.order}`)
    .limit(window.limit)
    .offset(window.offset);
  return { rows, total: Number(count) };
}

/** The repositories an entity links to (a link whose URL is the repository's page). */
export function repositoriesOfEntity(trx: Knex, links: { url: string }[]): Promise<string[]> {
  const urls = links.map((link) => link.url);
  if (!urls.length) return Promise.resolve([]);
  return trx('repositories').whereIn('html_url', urls).orderBy('full_name').pluck('full_name');
}
