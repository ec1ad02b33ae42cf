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
