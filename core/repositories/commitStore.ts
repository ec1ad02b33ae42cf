import type { Knex } from 'knex';
import { statement } from '../../db/statements';

// SQL for the commit history the crawl keeps per repository (repository_commits). Everything
// runs in the caller's tenant transaction (RLS).

export interface CommitRow {
  repository_id: string;
  /** 40 lower-case hex digits. */
  sha: string;
  author_name: string;
  /** Lower-cased: one contributor is one address. */
  author_email: string;
  authored_at: Date;
  committed_at: Date;
  additions: number;
  deletions: number;
}

const COMMIT_COLUMNS = [
  'repository_id',
  'sha',
  'author_name',
  'author_email',
  'authored_at',
  'committed_at',
  'additions',
  'deletions',
] as const satisfies readonly (keyof CommitRow)[];

const commitsSince = statement<CommitRow, { repositoryIds: string[]; since: Date }>((q, { repositoryIds, since }) =>
  q('repository_commits')
    .whereRaw('tenant_id = app_current_tenant()')
    .whereRaw('repository_id = any(?::uuid[])', [repositoryIds])
    .where('committed_at', '>=', since)
    .orderBy('committed_at')
    .orderBy('sha')
    .select(COMMIT_COLUMNS),
);

/** The commits of these repositories committed at `since` or later, oldest first. */
export async function commitsOfRepositories(trx: Knex, repositoryIds: string[], since: Date): Promise<CommitRow[]> {
  if (repositoryIds.length === 0) return [];
  return commitsSince.rows(trx, { repositoryIds, since });
}

const newestKept = statement<{ sha: string; committed_at: Date }, { repositoryId: string }>((q, { repositoryId }) =>
  q('repository_commits')
    .where('repository_id', repositoryId)
    .whereRaw(
      'committed_at = (select max(committed_at) from repository_commits where tenant_id = app_current_tenant() and repository_id = ?)',
      [repositoryId],
    )
    .whereRaw('tenant_id = app_current_tenant()')
    .select('sha', 'committed_at'),
);

/**
 * Where the next fetch starts: the newest kept commit time (the host lists from it, inclusive)
 * and the shas kept at that time, which it lists again; null when none is kept.
 */
export async function newestKeptCommits(
  trx: Knex,
  repositoryId: string,
): Promise<{ since: Date; shas: Set<string> } | null> {
  const rows = await newestKept.rows(trx, { repositoryId });
  if (!rows.length) return null;
  return { since: rows[0].committed_at, shas: new Set(rows.map((row) => row.sha)) };
}

/** Keeps fetched commits; one kept already (a retried crawl) stays as it is. */
export async function insertCommits(trx: Knex, tenantId: string, commits: CommitRow[]): Promise<number> {
  if (commits.length === 0) return 0;
  const rows = commits.map((commit) => ({ tenant_id: tenantId, ...commit }));
  const inserted = await trx('repository_commits')
    .insert(rows)
    .onConflict(['repository_id', 'sha'])
    .ignore()
    .returning('sha');
  return inserted.length;
}

/** Drops the repository's commits committed before `before` (out of the kept window). */
export const pruneCommits = (trx: Knex, repositoryId: string, before: Date): Promise<number> =>
  trx('repository_commits')
    .whereRaw('tenant_id = app_current_tenant()')
    .where('repository_id', repositoryId)
    .where('committed_at', '<', before)
    .delete();

/** Lines changed per author email (and the author's latest name) over a window of these repositories. */
const linesByAuthor = statement<
  { name: string; email: string; lines: string },
  { repositoryIds: string[]; since: Date }
>((q, { repositoryIds, since }) =>
  q('repository_commits')
    .whereRaw('tenant_id = app_current_tenant()')
    .whereRaw('repository_id = any(?::uuid[])', [repositoryIds])
    .where('committed_at', '>=', since)
    .groupBy('author_email')
    .select(
      q.raw('(array_agg(author_name order by committed_at desc))[1] as name'),
      'author_email as email',
      q.raw('sum(additions + deletions) as lines'),
    ),
);

export async function authorLines(
  trx: Knex,
  repositoryIds: string[],
  since: Date,
): Promise<{ name: string; email: string; lines: number }[]> {
  if (repositoryIds.length === 0) return [];
  const rows = await linesByAuthor.rows(trx, { repositoryIds, since });
  return rows.map((row) => ({ name: row.name, email: row.email, lines: Number(row.lines) }));
}
