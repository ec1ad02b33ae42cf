import { getBearerJson } from '../egress/bearerJson';
import type { EgressClient } from '../egress/egressClient';

// The crawler's reading of a tenant's source host (the vcs-host-a integration: the host's REST
// API). Every request goes through the egress guard; the token is sent to the host only.

/** A repository as the crawler keeps it (the repositories table's columns of the same names). */
export interface SourceHostRepository {
  full_name: string;
  owner: string;
  name: string;
  description: string | null;
  language: string | null;
  topics: string[];
  fork: boolean;
  archived: boolean;
  private: boolean;
  default_branch: string;
  html_url: string | null;
}

/** A Markdown file: its path in the repository, its text, and the host's blob sha. */
export interface SourceHostFile {
  path: string;
  content: string;
  sha: string;
}

/** A commit as the commit list shows it (no lines changed: those take a request per commit). */
export interface SourceHostCommit {
  sha: string;
  author_name: string;
  /** Lower-cased. */
  author_email: string;
  authored_at: Date;
  committed_at: Date;
}

/** Lines a commit changed; null when its details were over the answer size limit. */
export type SourceHostCommitStats = { additions: number; deletions: number } | null;

/** The host answered with an error status (`status`), or with something that is not its API. */
export class SourceHostError extends Error {
  constructor(
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'SourceHostError';
  }
}

const TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const PAGE_SIZE = 100;
const MAX_PAGES = 50;
const MAX_DOC_FILES = 200;
const FULL_NAME = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/;
const MARKDOWN = /\.(md|markdown)$/i;
const SHA = /^[0-9a-f]{40}$/;

/** A repository as the host's API and its webhook payloads show it. */
export interface HostRepository {
  full_name: string;
  name: string;
  owner: { login: string };
  description: string | null;
  language: string | null;
  topics?: string[];
  fork: boolean;
  archived: boolean;
  private: boolean;
  default_branch: string;
  html_url: string | null;
}

interface HostEntry {
  type: 'file' | 'dir' | string;
  path: string;
  sha: string;
  content?: string;
  encoding?: string;
}

interface HostCommit {
  sha: string;
  parents?: unknown[];
  commit: {
    author?: { name?: string; email?: string; date?: string } | null;
    committer?: { date?: string } | null;
  };
  stats?: { additions?: number; deletions?: number };
}

const isCommit = (value: unknown): value is HostCommit =>
  typeof (value as HostCommit)?.sha === 'string' &&
  SHA.test((value as HostCommit).sha.toLowerCase()) &&
  typeof (value as HostCommit).commit === 'object' &&
  (value as HostCommit).commit !== null;

const isRepository = (value: unknown): value is HostRepository =>
  typeof (value as HostRepository)?.full_name === 'string' &&
  typeof (value as HostRepository).name === 'string' &&
  typeof (value as HostRepository).owner?.login === 'string';

const isEntry = (value: unknown): value is HostEntry =>
  typeof (value as HostEntry)?.path === 'string' && typeof (value as HostEntry).type === 'string';

export class SourceHostClient {
  private readonly baseUrl: string;

  constructor(
    private readonly egress: EgressClient,
    private readonly options: { baseUrl: string; token: string; signal?: AbortSignal },
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** Every repository the token can see, page after page (at most 5,000). */
  async listRepositories(): Promise<SourceHostRepository[]> {
    const repositories: SourceHostRepository[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const listed = await this.get(`/user/repos?per_page=${PAGE_SIZE}&page=${page}`);
      if (!Array.isArray(listed) || !listed.every(isRepository))
        throw new SourceHostError(undefined, 'the repository list is not what the host API answers');
      repositories.push(...listed.map(repositoryOf));
      if (listed.length < PAGE_SIZE) break;
    }
    return repositories;
  }

  /** The repository's README; null when it has none. */
  async readme(fullName: string): Promise<SourceHostFile | null> {
    const entry = await this.get(`${repositoryPath(fullName)}/readme`, { missing: null });
    return entry === null ? null : fileOf(entry);
  }

  /** Every Markdown file under docs/, sub-directories included (at most 200); [] without docs/. */
  async docs(fullName: string): Promise<SourceHostFile[]> {
    const files: SourceHostFile[] = [];
    const directories = ['docs'];
    while (directories.length && files.length < MAX_DOC_FILES) {
      const listing = await this.get(this.contentsPath(fullName, directories.shift()!), { missing: [] });
      if (!Array.isArray(listing) || !listing.every(isEntry))
        throw new SourceHostError(undefined, 'a directory listing is not what the host API answers');
      for (const entry of listing) {
        if (entry.type === 'dir') directories.push(entry.path);
        else if (entry.type === 'file' && MARKDOWN.test(entry.path) && files.length < MAX_DOC_FILES)
          files.push(fileOf(await this.get(this.contentsPath(fullName, entry.path))));
      }
    }
    return files.sort((a, b) => a.path.localeCompare(b.path));
  }

  /**
   * The commits committed at `since` or later, the newest `max` of them when there are more (the
   * host lists newest first), merge commits left out (their lines are the merged branch's,
   * counted in its own commits).
   */
  async listCommits(fullName: string, since: Date, max: number): Promise<SourceHostCommit[]> {
    const commits: SourceHostCommit[] = [];
    const query = `since=${encodeURIComponent(since.toISOString())}&per_page=${PAGE_SIZE}`;
    for (let page = 1, listed = 0; ; page++) {
      // An empty repository (no commit at all) is a 409 on this API, not an empty list.
      const answer = await this.get(`${repositoryPath(fullName)}/commits?${query}&page=${page}`, {
        missing: [],
        conflict: [],
      });
      if (!Array.isArray(answer) || !answer.every(isCommit))
        throw new SourceHostError(undefined, 'the commit list is not what the host API answers');
      for (const entry of answer) {
        if (listed++ >= max) return commits;
        if ((entry.parents?.length ?? 0) <= 1) commits.push(commitOf(entry));
      }
      if (answer.length < PAGE_SIZE) return commits;
    }
  }

  /** The lines one commit added and deleted (its details: one request). */
  async commitStats(fullName: string, sha: string): Promise<SourceHostCommitStats> {
    if (!SHA.test(sha)) throw new SourceHostError(undefined, `"${sha}" is not a commit sha`);
    const entry = await this.get(`${repositoryPath(fullName)}/commits/${sha}`, { oversized: null });
    if (entry === null) return null;
    const additions = (entry as HostCommit)?.stats?.additions;
    const deletions = (entry as HostCommit)?.stats?.deletions;
    if (!Number.isSafeInteger(additions) || !Number.isSafeInteger(deletions) || additions! < 0 || deletions! < 0)
      throw new SourceHostError(undefined, 'a commit is not what the host API answers');
    return { additions: additions!, deletions: deletions! };
  }

  private contentsPath(fullName: string, path: string): string {
    // Each segment encoded: a name from the host cannot add or climb segments.
    const segments = path.split('/').filter((segment) => segment && segment !== '.' && segment !== '..');
    return `${repositoryPath(fullName)}/contents/${segments.map(encodeURIComponent).join('/')}`;
  }

  /**
   * GET `path` as JSON; a 404 answers `missing`, a 409 `conflict` and an answer over the size
   * limit `oversized`, each when given.
   */
  private get(
    path: string,
    { missing, conflict, oversized }: { missing?: unknown; conflict?: unknown; oversized?: unknown } = {},
  ): Promise<unknown> {
    return getBearerJson(
      this.egress,
      {
        baseUrl: this.baseUrl,
        path,
        token: this.options.token,
        name: 'the source host',
        timeoutMs: TIMEOUT_MS,
        maxBodyBytes: MAX_BODY_BYTES,
        signal: this.options.signal,
        answers: { 404: missing, 409: conflict },
        oversized,
      },
      (status, message) => new SourceHostError(status, message),
    );
  }
}

function repositoryPath(fullName: string): string {
  if (!FULL_NAME.test(fullName) || fullName.split('/').some((part) => part === '.' || part === '..'))
    throw new SourceHostError(undefined, `"${fullName}" is not an owner/name repository name`);
  return `/repos/${fullName.split('/').map(encodeURIComponent).join('/')}`;
}

/** A repository as the crawler keeps it; fields a payload leaves out take the host's defaults. */
export function repositoryOf(
  host: Pick<HostRepository, 'full_name' | 'name' | 'owner'> & Partial<HostRepository>,
): SourceHostRepository {
  return {
    full_name: host.full_name,
    owner: host.owner.login,
    name: host.name,
    description: host.description ?? null,
    language: host.language ?? null,
    topics: host.topics ?? [],
    fork: Boolean(host.fork),
    archived: Boolean(host.archived),
    private: Boolean(host.private),
    default_branch: host.default_branch || 'main',
    html_url: host.html_url ?? null,
  };
}

function commitOf(entry: HostCommit): SourceHostCommit {
  const authoredAt = new Date(entry.commit.author?.date ?? '');
  const committedAt = new Date(entry.commit.committer?.date ?? entry.commit.author?.date ?? '');
  if (Number.isNaN(authoredAt.getTime()) || Number.isNaN(committedAt.getTime()))
    throw new SourceHostError(undefined, `commit ${entry.sha} has no valid dates`);
  return {
    sha: entry.sha.toLowerCase(),
    author_name: (entry.commit.author?.name ?? '').slice(0, 255),
    author_email: (entry.commit.author?.email ?? '').toLowerCase().slice(0, 320),
    authored_at: authoredAt,
    committed_at: committedAt,
  };
}

function fileOf(entry: unknown): SourceHostFile {
  if (!isEntry(entry) || entry.type !== 'file' || typeof entry.content !== 'string' || entry.encoding !== 'base64')
    throw new SourceHostError(undefined, 'a file is not what the host API answers');
  return { path: entry.path, sha: entry.sha, content: Buffer.from(entry.content, 'base64').toString('utf8') };
}
