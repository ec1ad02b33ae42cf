import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../core/config';
import type { Keyring } from '../core/crypto/keyring';
import { EgressError, type EgressClient } from '../core/egress/egressClient';
import { activeIntegrationOfType } from '../core/integrations/store';
import {
  deleteDocStatuses,
  docStatuses,
  dueRepositoryIds,
  getRepository,
  recordCrawl,
  recordIndexedDocs,
  syncRepositories,
  type RepositoryRow,
} from '../core/repositories/store';
import { insertCommits, newestKeptCommits, pruneCommits, type CommitRow } from '../core/repositories/commitStore';
import { refreshEntityBusFactors } from '../core/insights/busFactorCommands';
import { SourceHostClient, SourceHostError, type SourceHostFile } from '../core/sourceHost/client';
import { workflowId } from '../core/searchAttributes';
import { withTenant } from '../db/tenancy';
import type { SearchEngine } from './client';
import { INDEX_WRITER_LOCK, writeToIndex, type IndexChange, type OnRefused, type RefusedDocument } from './bulk';
import { suggestionOf, type DocDocument } from './documents';
import { ensureIndices } from './indices';

// The documentation crawler (spec, "Search index operations"): per tenant, list the repositories
// its vcs-host-a integration sees, then fetch each due repository's README and Markdown under
// docs/ and index what changed. Content goes to the docs index only; the database keeps the
// tracking rows (path, content hash, indexed). The same crawl brings the repository's commit
// history up to date (repository_commits: the bus factor, DORA's lead time) and refreshes the
// kept bus factor of the entities linking to it. A Temporal workflow on the search pool
// (workflows/searchCrawl.ts) runs it, one activity per repository; this module is its contract.

/** Repositories one crawl takes on; the rest stay due for the next. */
export const CRAWL_BATCH = 500;

export interface CrawlInput {
  tenantId: string;
}

/** Counts only: they enter workflow history. */
export interface CrawlResult {
  repositories: number;
  crawled: number;
  failed: number;
  /** Files written to the engine (new, changed, or reset by a recrawl). */
  indexed: number;
  /** Files whose content hash had not changed: not written again. */
  unchanged: number;
  /** Files (or whole repositories) gone from the host, deleted from the engine. */
  removed: number;
  /** Why the repository list could not be read (no integration, the host refused). */
  sync_error?: string;
}

/** The contracts the API and the schedule start the workflows by (they never import workflows/). */
export type SearchCrawlWorkflow = (input: CrawlInput) => Promise<CrawlResult>;
export type CrawlTickWorkflow = () => Promise<{ tenants: number }>;
export const CRAWL_TICK_SCHEDULE_ID = 'shipyard-crawl-tick';

/**
 * The crawl of the repositories whose documentation a push changed: one run per tenant at a
 * time, each repository crawled by `crawlRepository` as the tenant's crawl does. Started, or told
 * of one more repository, by signal-with-start; a repository pushed while it is being crawled is
 * crawled again after, so the later change is not lost.
 */
export interface PushCrawlInput {
  tenantId: string;
  repositoryIds: string[];
}
export type PushCrawlWorkflow = (input: PushCrawlInput) => Promise<{ crawled: number }>;
export const REPOSITORY_PUSHED_SIGNAL = 'repository-pushed';
export type RepositoryPushedSignal = typeof REPOSITORY_PUSHED_SIGNAL;
export const pushCrawlWorkflowId = (tenantId: string) => workflowId('search-crawl-pushes', tenantId);

export interface CrawlDeps {
  db: Knex;
  search: SearchEngine;
  egress: EgressClient;
  keyring: Keyring;
  config: Pick<Config, 'crawl' | 'commitHistory'>;
  /** Hears of files the engine refused: they are not recorded as indexed, so each crawl tries them again. */
  onRefused?: OnRefused;
}

/** What a crawl of one repository did. */
export interface RepositoryCrawl {
  status: 'crawled' | 'failed';
  indexed: number;
  unchanged: number;
  removed: number;
  /** Commits fetched and kept. */
  commits: number;
}

/** A failure of the host or of the way to it: recorded on the repository, retried later. */
const isHostFailure = (err: unknown) => err instanceof SourceHostError || err instanceof EgressError;

/** The tenant's source-host client, or why there is none. */
async function sourceHost(deps: CrawlDeps, tenantId: string, integrationId?: string) {
  const found = await withTenant(deps.db, tenantId, (trx) =>
    activeIntegrationOfType(trx, deps.keyring, 'vcs-host-a', integrationId),
  );
  if ('problem' in found) return found;
  const { base_url, token } = found.integration.config as { base_url: string; token: string };
  return {
    integrationId: found.integration.id,
    client: new SourceHostClient(deps.egress, { baseUrl: base_url, token }),
  };
}

/**
 * Brings the tenant's repository list in line with its source host (the integration named, else
 * its only one in use) and returns the ids of the repositories due for a crawl. A listing that
 * fails changes nothing: the repositories already known are still crawled when due.
 */
export async function syncTenant(
  deps: CrawlDeps,
  tenantId: string,
  integrationId?: string,
): Promise<{ due: string[]; removed: number; sync_error?: string }> {
  const host = await sourceHost(deps, tenantId, integrationId);
  let sync_error: string | undefined;
  let removed = 0;
  if ('problem' in host) {
    sync_error = host.problem;
  } else {
    try {
      const listed = await host.client.listRepositories();
      await ensureIndices(deps.search);
      removed = await withTenant(deps.db, tenantId, async (trx) => {
        const { removedDocIds } = await syncRepositories(trx, tenantId, host.integrationId, listed);
        await removeDocs(trx, deps.search, removedDocIds);
        return removedDocIds.length;
      });
    } catch (err) {
      if (!isHostFailure(err)) throw err;
      sync_error = (err as Error).message;
    }
  }
  const due = await withTenant(deps.db, tenantId, (trx) => dueRepositoryIds(trx, CRAWL_BATCH));
  return { due, removed, ...(sync_error && { sync_error }) };
}

/**
 * Writes documentation changes under the index writer lock, like every writer of the engine,
 * so a reindex copying the docs index never misses one (search/reindex.ts).
 */
async function writeDocs(
  trx: Knex,
  engine: SearchEngine,
  changes: IndexChange[],
  onRefused?: OnRefused,
): Promise<RefusedDocument[]> {
  if (!changes.length) return [];
  await trx.raw('select pg_advisory_xact_lock(?)', [INDEX_WRITER_LOCK]);
  return writeToIndex(engine, changes, { onRefused });
}

/**
 * Deletes from the engine the documents of tracking rows `trx` removed with their repositories;
 * should the engine refuse, the rows come back with the rollback.
 */
export async function removeDocs(trx: Knex, engine: SearchEngine, docIds: string[]): Promise<void> {
  await writeDocs(
    trx,
    engine,
    docIds.map((id) => ({ collection: 'docs', id })),
  );
}

/** A documentation file's id: the same for the same repository and path, so a retry overwrites. */
export function docId(repositoryId: string, path: string): string {
  const hex = createHash('sha256').update(`${repositoryId}\n${path}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const contentHash = (content: string) => createHash('sha256').update(content).digest('hex');

/** The title of a Markdown file: its first heading, else its path. */
export function docTitle(file: SourceHostFile): string {
  const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(file.content)?.[1];
  return heading || file.path;
}

function docDocument(repository: RepositoryRow, file: SourceHostFile): DocDocument {
  const key = `${repository.full_name}/${file.path}`;
  const title = docTitle(file);
  return {
    tenant_id: repository.tenant_id,
    collection: 'docs',
    key,
    title,
    description: null,
    type: /^readme(\.|$)/i.test(file.path) ? 'readme' : 'doc',
    lifecycle: null,
    owner: repository.owner,
    tier: null,
    tags: repository.topics,
    updated_at: new Date().toISOString(),
    suggest: suggestionOf({ title, key, tenant_id: repository.tenant_id }),
    repository: repository.full_name,
    path: file.path,
    content: file.content,
  };
}

/**
 * Crawls one repository: fetches its README, docs/ and the commits since the newest kept one,
 * keeps the commits, writes to the engine each file that is new, changed, or not indexed (a
 * recrawl's reset), deletes those gone, then records the hashes and when it is due again. A host failure is recorded on the repository (status `failed`,
 * retried after `crawl.retryMs`); anything else throws, for the activity's retries.
 */
export async function crawlRepository(
  deps: CrawlDeps,
  tenantId: string,
  repositoryId: string,
): Promise<RepositoryCrawl> {
  const none = { indexed: 0, unchanged: 0, removed: 0, commits: 0 };
  const repository = await withTenant(deps.db, tenantId, (trx) => getRepository(trx, repositoryId));
  if (!repository) return { status: 'crawled', ...none }; // removed since it was listed as due
  const failed = async (error: string): Promise<RepositoryCrawl> => {
    await withTenant(deps.db, tenantId, (trx) =>
      recordCrawl(trx, repositoryId, { status: 'failed', error, nextCrawlInMs: deps.config.crawl.retryMs }),
    );
    return { status: 'failed', ...none };
  };
  const host = await sourceHost(deps, tenantId, repository.integration_id);
  if ('problem' in host) return failed(host.problem);
  const kept = await withTenant(deps.db, tenantId, (trx) => newestKeptCommits(trx, repositoryId));
  const keptFrom = new Date(Date.now() - deps.config.commitHistory.days * DAY_MS);
  let files: SourceHostFile[];
  let commits: CommitRow[];
  try {
    const [readme, docs, fetched] = await Promise.all([
      host.client.readme(repository.full_name),
      host.client.docs(repository.full_name),
      fetchCommits(host.client, repository, kept, keptFrom, deps.config.commitHistory),
    ]);
    files = [...(readme ? [readme] : []), ...docs];
    commits = fetched;
  } catch (err) {
    if (!isHostFailure(err)) throw err;
    return failed((err as Error).message);
  }

  await ensureIndices(deps.search);
  return withTenant(deps.db, tenantId, async (trx) => {
    // Before the documents: writing them holds the index writer lock until the commit.
    const keptCommits = await insertCommits(trx, tenantId, commits);
    await pruneCommits(trx, repositoryId, keptFrom);
    // Every crawl, new commits or not: the window moves on with the days.
    await refreshEntityBusFactors(trx, tenantId, repository.html_url);
    const known = new Map((await docStatuses(trx, repositoryId)).map((row) => [row.path, row]));
    const hashes = new Map(files.map((file) => [file.path, contentHash(file.content)]));
    const changed = files.filter((file) => {
      const row = known.get(file.path);
      return !row || !row.indexed || row.content_hash !== hashes.get(file.path);
    });
    const gone = [...known.values()].filter((row) => !hashes.has(row.path));
    const changes: IndexChange[] = [
      ...changed.map((file) => ({
        collection: 'docs' as const,
        id: docId(repositoryId, file.path),
        document: docDocument(repository, file),
      })),
      ...gone.map((row) => ({ collection: 'docs' as const, id: row.id })),
    ];
    // The engine first: should recording fail, the next crawl writes the same ids again.
    const refused = await writeDocs(trx, deps.search, changes, deps.onRefused);
    const refusedIds = new Set(refused.map((doc) => doc.id));
    const indexed = changed.filter((file) => !refusedIds.has(docId(repositoryId, file.path)));
    await recordIndexedDocs(
      trx,
      tenantId,
      repositoryId,
      indexed.map((file) => ({
        id: docId(repositoryId, file.path),
        path: file.path,
        content_hash: hashes.get(file.path)!,
      })),
    );
    await deleteDocStatuses(
      trx,
      gone.map((row) => row.id),
    );
    await recordCrawl(trx, repositoryId, {
      status: 'crawled',
      error: null,
      nextCrawlInMs: deps.config.crawl.intervalMs,
    });
    return {
      status: 'crawled',
      indexed: indexed.length,
      unchanged: files.length - changed.length,
      removed: gone.length,
      commits: keptCommits,
    };
  });
}

const DAY_MS = 86_400_000;
/** Commit details fetched at once from the host. */
const COMMIT_DETAIL_CONCURRENCY = 4;

/**
 * The commits to keep from this crawl: those the host lists from the newest kept one (or the
 * window's start) that are not kept yet, oldest first, at most `fetchPerCrawl`, each with its
 * lines changed (one request each); the rest are listed again by the next crawl. A commit whose
 * details are over the answer size limit (a vendored or generated dump) counts no lines.
 */
async function fetchCommits(
  client: SourceHostClient,
  repository: RepositoryRow,
  kept: { since: Date; shas: Set<string> } | null,
  keptFrom: Date,
  limits: Config['commitHistory'],
): Promise<CommitRow[]> {
  const since = kept && kept.since > keptFrom ? kept.since : keptFrom;
  const { commits } = await client.listCommits(repository.full_name, since, limits.listPerCrawl);
  const wanted = commits
    .filter((commit) => !kept?.shas.has(commit.sha) && commit.committed_at >= keptFrom)
    .sort((a, b) => a.committed_at.getTime() - b.committed_at.getTime() || (a.sha < b.sha ? -1 : 1))
    .slice(0, limits.fetchPerCrawl);
  const rows: CommitRow[] = [];
  for (let i = 0; i < wanted.length; i += COMMIT_DETAIL_CONCURRENCY) {
    const batch = wanted.slice(i, i + COMMIT_DETAIL_CONCURRENCY);
    const stats = await Promise.all(batch.map((commit) => client.commitStats(repository.full_name, commit.sha)));
    batch.forEach((commit, j) =>
      rows.push({
        repository_id: repository.id,
        ...commit,
        additions: stats[j]?.additions ?? 0,
        deletions: stats[j]?.deletions ?? 0,
      }),
    );
  }
  return rows;
}
