import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import { toIso, toIsoOrNull } from '../timestamps';
import type { SourceHostRepository } from '../sourceHost/client';
import type { RepositoryFilters, RepositoryView } from './types';
import { statement, type Placeholders } from '../../db/statements';

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

interface GoneRepositories {
  integrationId: string;
  /** The full names the host listed. */
  listedNames: string[];
}

/** The repositories of an integration that the host no longer lists. */
const goneRepositories = (q: Knex, { integrationId, listedNames }: GoneRepositories | Placeholders<GoneRepositories>) =>
  q('repositories').where({ integration_id: integrationId }).whereRaw('full_name <> all(?)', [listedNames]);

/** The tracking rows of the repositories gone. */
const docIdsOfGone = statement<{ id: string }, GoneRepositories>((q, gone) =>
  q('doc_crawl_status').whereIn('repository_id', goneRepositories(q, gone).select('id')).select('id'),
);

/**
 * Adds the repositories the host shows (due for a crawl at once) and updates those known, only
 * where something changed: an unchanged one writes nothing and indexes nothing.
 */
async function upsertRepositories(
  trx: Knex,
  tenantId: string,
  integrationId: string,
  repositories: SourceHostRepository[],
): Promise<void> {
  if (!repositories.length) return;
  const rows = repositories.map((repository) => ({
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

/**
 * Brings the tenant's repositories of one integration in line with what the host listed: new
 * ones are added, changed ones updated, and those the host no longer lists are removed with
 * their tracking rows. Returns the ids of the tracking rows removed, whose documents the caller
 * deletes from the engine.
 */
export async function syncRepositories(
  trx: Knex,
  tenantId: string,
  integrationId: string,
  listed: SourceHostRepository[],
): Promise<{ removedDocIds: string[] }> {
  await upsertRepositories(trx, tenantId, integrationId, listed);
  const gone = { integrationId, listedNames: listed.map((repository) => repository.full_name) };
  const removedDocIds = (await docIdsOfGone.rows(trx, gone)).map((row) => row.id);
  await goneRepositories(trx, gone).delete();
  return { removedDocIds };
}

const docIdsOfNamed = statement<{ id: string }, { fullName: string }>((q, { fullName }) =>
  q('doc_crawl_status')
    .whereIn('repository_id', q('repositories').where({ full_name: fullName }).select('id'))
    .select('id'),
);

/**
 * Removes the tenant's repository of that name (gone from the host) with its tracking rows.
 * Returns the ids of the tracking rows removed, whose documents the caller deletes from the engine.
 */
export async function removeRepository(trx: Knex, fullName: string): Promise<{ removedDocIds: string[] }> {
  const removedDocIds = (await docIdsOfNamed.rows(trx, { fullName })).map((row) => row.id);
  await trx('repositories').where({ full_name: fullName }).delete();
  return { removedDocIds };
}

/**
 * One repository as the host shows it now (a webhook's), added or updated. `previousFullName`:
 * the name it had before a rename or a transfer; the row known by it takes the new name, keeping
 * its id, crawl state and tracked documents, unless the new name is known already (the crawl
 * listed it meanwhile): then the old row goes, and its tracking rows are returned as removed.
 */
export async function upsertRepository(
  trx: Knex,
  tenantId: string,
  integrationId: string,
  repository: SourceHostRepository,
  previousFullName?: string,
): Promise<{ id: string; removedDocIds: string[] }> {
  let removedDocIds: string[] = [];
  if (previousFullName) {
    await trx('repositories')
      .where({ full_name: previousFullName })
      .whereNotExists((q) => q.select(trx.raw('1')).from('repositories').where({ full_name: repository.full_name }))
      .update({ full_name: repository.full_name });
  }
  await upsertRepositories(trx, tenantId, integrationId, [repository]);
  if (previousFullName) ({ removedDocIds } = await removeRepository(trx, previousFullName));
  const { id } = await trx('repositories').where({ full_name: repository.full_name }).first('id');
  return { id, removedDocIds };
}

/** Makes a repository due for a crawl now: the fallback tick crawls it should nothing else. */
export async function crawlDueNow(trx: Knex, id: string): Promise<void> {
  await trx('repositories').where({ id }).update({ next_crawl_at: trx.fn.now(), crawl_status: 'pending' });
}

const dueRepositories = statement<{ id: string }, { limit: number }>((q, { limit }) =>
  q('repositories')
    .where('next_crawl_at', '<=', q.fn.now())
    .orderBy([{ column: 'next_crawl_at' }, { column: 'id' }])
    .limit(limit)
    .select('id'),
);

/** The repositories whose next crawl is due, oldest due first. */
export async function dueRepositoryIds(trx: Knex, limit: number): Promise<string[]> {
  return (await dueRepositories.rows(trx, { limit })).map((row) => row.id);
}

const repositoryById = statement<RepositoryRow, { id: string }>((q, { id }) => q('repositories').where({ id }).first());

export async function getRepository(trx: Knex, id: string): Promise<RepositoryRow | undefined> {
  return repositoryById.first(trx, { id });
}

const docStatusesOf = statement<DocStatusRow, { repositoryId: string }>((q, { repositoryId }) =>
  q('doc_crawl_status')
    .where({ repository_id: repositoryId })
    .select('id', 'repository_id', 'path', 'content_hash', 'indexed'),
);

export function docStatuses(trx: Knex, repositoryId: string): Promise<DocStatusRow[]> {
  return docStatusesOf.rows(trx, { repositoryId });
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

const crawledTenants = statement<{ tenant_id: string }>((q) =>
  q('integrations').where({ type: 'vcs-host-a', status: 'active' }).distinct('tenant_id'),
);

/** The tenants whose repositories the fallback tick crawls: those with an active vcs-host-a integration. */
export async function tenantsToCrawl(system: Knex): Promise<string[]> {
  return (await crawledTenants.rows(system)).map((row) => row.tenant_id);
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

/** The filters of a list that take a value. */
const VALUE_FILTERS = ['search', 'provider', 'owner', 'language', 'topic', 'team'] as const;

interface RepositoryListShape extends Pick<
  RepositoryFilters,
  'sort' | 'order' | 'show_forks' | 'show_archived' | 'show_private'
> {
  /** The filters given a value (an empty one is no filter). */
  given: (typeof VALUE_FILTERS)[number][];
}

/** A list's filter values; `pattern`: the `ilike` pattern of its search. */
type RepositoryListValues = Pick<RepositoryFilters, 'provider' | 'owner' | 'language' | 'topic' | 'team'> & {
  pattern?: string;
};

function filteredRepositories(q: Knex, values: Placeholders<RepositoryListValues>, shape: RepositoryListShape) {
  const query = q('repositories as r');
  const given = (filter: (typeof VALUE_FILTERS)[number]) => shape.given.includes(filter);
  if (given('search')) {
    query.where((w) => w.whereILike('r.full_name', values.pattern).orWhereILike('r.description', values.pattern));
  }
  if (given('provider')) query.where('r.provider', values.provider);
  if (given('owner')) query.where('r.owner', values.owner);
  if (given('language')) query.whereRaw('lower(r.language) = lower(?)', [values.language]);
  if (given('topic')) query.whereRaw('? = any(r.topics)', [values.topic]);
  if (given('team')) {
    // A repository belongs to the team that owns an entity linking to it.
    query.whereExists((sub) =>
      sub
        .select(q.raw('1'))
        .from('entities as e')
        .where('e.owner', values.team)
        .whereRaw(`e.links @> jsonb_build_array(jsonb_build_object('url', r.html_url))`),
    );
  }
  if (!shape.show_forks) query.where('r.fork', false);
  if (!shape.show_archived) query.where('r.archived', false);
  if (!shape.show_private) query.where('r.private', false);
  return query;
}

const repositoryCount = statement<{ count: string }, RepositoryListValues, RepositoryListShape>((q, values, shape) =>
  filteredRepositories(q, values, shape).count('* as count'),
);

const repositoryPage = statement<RepositoryRow, RepositoryListValues & OffsetWindow, RepositoryListShape>(
  (q, values, shape) => {
    const column = `r.${SORT_COLUMNS[shape.sort]}`;
    return filteredRepositories(q, values, shape)
      .select('r.*')
      .orderByRaw(`${column} ${shape.order} nulls last, r.id ${shape.order}`)
      .limit(values.limit)
      .offset(values.offset);
  },
);

/** The filtered, sorted page of the tenant's repositories and the filtered total. */
export async function listRepositories(
  trx: Knex,
  filters: RepositoryFilters,
  window: OffsetWindow,
): Promise<{ rows: RepositoryRow[]; total: number }> {
  const shape: RepositoryListShape = {
    given: VALUE_FILTERS.filter((filter) => filters[filter]),
    show_forks: filters.show_forks,
    show_archived: filters.show_archived,
    show_private: filters.show_private,
    sort: filters.sort,
    order: filters.order,
  };
  const values: RepositoryListValues = {
    ...filters,
    pattern: filters.search ? `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined,
  };
  const [{ count }] = await repositoryCount.rows(trx, values, shape);
  const rows = await repositoryPage.rows(trx, { ...values, ...window }, shape);
  return { rows, total: Number(count) };
}

const repositoriesAtUrls = statement<{ full_name: string }, { urls: string[] }>((q, { urls }) =>
  q('repositories').whereRaw('html_url = any(?)', [urls]).orderBy('full_name').select('full_name'),
);

/** The repositories an entity links to (a link whose URL is the repository's page). */
export async function repositoriesOfEntity(trx: Knex, links: { url: string }[]): Promise<string[]> {
  const urls = links.map((link) => link.url);
  if (!urls.length) return [];
  return (await repositoriesAtUrls.rows(trx, { urls })).map((row) => row.full_name);
}
