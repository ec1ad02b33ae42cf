import { createHash } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAKES_HOST } from './testEnv';

/**
 * A small stand-in for the vcs-host-a REST API, served over a real socket: bearer-token auth,
 * repositories, issue creation and repository dispatch events, with the host's status codes
 * (401 bad credentials, 404 unknown repository, 422 invalid issue, 201/204 on success).
 * `outages` makes the next requests answer 502, as the host does under load. A repository in
 * `moved` (renamed or transferred) answers with a redirect to where it went, as the host does:
 * 301 for GET and HEAD, 307 otherwise; the value replaces `/repos/owner/name` in the URL.
 *
 * For the crawler: `GET /user/repos` pages the repositories (with `details` per repository),
 * and `GET /repos/o/r/readme` and `/contents/{path}` serve `files` (path → text per repository):
 * a file base64-encoded, a directory as the list of its children. `commits` (per repository) are
 * served as the host does: `GET /repos/o/r/commits?since=&per_page=&page=` lists them newest
 * first without lines changed, `GET /repos/o/r/commits/{sha}` gives one with its `stats`; a
 * repository without `commits` is empty, a 409 as on the host.
 */
export interface FakeSourceHost {
  url: string;
  token: string;
  repositories: Set<string>;
  requests: { method: string; path: string; authorization?: string; body: unknown }[];
  issues: { repository: string; number: number; title: string; body?: string; labels?: string[] }[];
  dispatches: { repository: string; event_type: string; client_payload?: unknown }[];
  outages: number;
  moved: Map<string, string>;
  details: Map<string, Partial<RepositoryDetails>>;
  files: Map<string, Map<string, string>>;
  commits: Map<string, FakeCommit[]>;
  close(): Promise<void>;
}

/** A commit of the fake host; `sha` defaults to a hash of the rest, `parents` to one. */
export interface FakeCommit {
  sha?: string;
  author_name: string;
  author_email: string;
  committed_at: Date;
  additions: number;
  deletions: number;
  parents?: number;
}

interface RepositoryDetails {
  description: string | null;
  language: string | null;
  topics: string[];
  fork: boolean;
  archived: boolean;
  private: boolean;
  default_branch: string;
}

const DEFAULT_DETAILS: RepositoryDetails = {
  description: null,
  language: null,
  topics: [],
  fork: false,
  archived: false,
  private: false,
  default_branch: 'main',
};

const sha = (content: string) => createHash('sha1').update(content).digest('hex');

const fileEntry = (path: string, content: string) => ({
  type: 'file',
  name: path.split('/').pop(),
  path,
  sha: sha(content),
  encoding: 'base64',
  content: Buffer.from(content, 'utf8')
    .toString('base64')
    .replace(/(.{60})/g, '$1\n'),
});

/** The contents API's answer for `path` of `files`: a file, a directory listing, or undefined. */
function contents(files: Map<string, string>, path: string): unknown {
  const file = files.get(path);
  if (file !== undefined) return fileEntry(path, file);
  const children = new Map<string, { type: string; name: string; path: string; sha: string }>();
  for (const filePath of [...files.keys()].sort()) {
    if (!filePath.startsWith(`${path}/`)) continue;
    const [name, ...rest] = filePath.slice(path.length + 1).split('/');
    const childPath = `${path}/${name}`;
    children.set(name, { type: rest.length ? 'dir' : 'file', name, path: childPath, sha: sha(childPath) });
  }
  return children.size ? [...children.values()] : undefined;
}

const commitSha = (commit: FakeCommit) =>
  commit.sha ??
  sha(`${commit.author_email}\n${commit.committed_at.toISOString()}\n${commit.additions}\n${commit.deletions}`);

/** A commit as the host's list shows it; with its stats as the host's commit detail does. */
function commitEntry(commit: FakeCommit, withStats: boolean) {
  const date = commit.committed_at.toISOString();
  return {
    sha: commitSha(commit),
    parents: Array.from({ length: commit.parents ?? 1 }, (_, i) => ({ sha: sha(`parent ${i}`) })),
    commit: {
      author: { name: commit.author_name, email: commit.author_email, date },
      committer: { name: commit.author_name, email: commit.author_email, date },
    },
    ...(withStats && {
      stats: { additions: commit.additions, deletions: commit.deletions, total: commit.additions + commit.deletions },
    }),
  };
}

const send = (res: ServerResponse, status: number, body?: unknown) => {
  res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
  res.end(body === undefined ? undefined : JSON.stringify(body));
};

export async function startFakeSourceHost(token = `vcs-token-${Date.now()}`): Promise<FakeSourceHost> {
  const host = {
    token,
    repositories: new Set<string>(),
    requests: [],
    issues: [],
    dispatches: [],
    outages: 0,
    moved: new Map(),
    details: new Map(),
    files: new Map(),
    commits: new Map(),
  } as unknown as FakeSourceHost;
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body: Record<string, unknown>;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return send(res, 400, { message: 'Problems parsing JSON' });
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    host.requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
    if (host.outages > 0) {
      host.outages -= 1;
      return send(res, 502, { message: 'Server Error' });
    }
    if (req.headers.authorization !== `Bearer ${host.token}`) return send(res, 401, { message: 'Bad credentials' });

    if (req.method === 'GET' && path === '/user/repos') {
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const names = [...host.repositories].sort().slice((page - 1) * perPage, page * perPage);
      return send(
        res,
        200,
        names.map((fullName) => {
          const [owner, name] = fullName.split('/');
          const details = { ...DEFAULT_DETAILS, ...host.details.get(fullName) };
          return {
            full_name: fullName,
            name,
            owner: { login: owner },
            html_url: `${host.url}/${fullName}`,
            ...details,
          };
        }),
      );
    }
    const commits = /^\/repos\/([^/]+)\/([^/]+)\/commits(?:\/([0-9a-f]{40}))?$/.exec(path);
    if (req.method === 'GET' && commits) {
      const repository = `${decodeURIComponent(commits[1])}/${decodeURIComponent(commits[2])}`;
      if (!host.repositories.has(repository)) return send(res, 404, { message: 'Not Found' });
      const history = host.commits.get(repository);
      // The host's answer for a repository without a single commit.
      if (!history) return send(res, 409, { message: 'Git Repository is empty.' });
      if (commits[3]) {
        const found = history.find((commit) => commitSha(commit) === commits[3]);
        return found ? send(res, 200, commitEntry(found, true)) : send(res, 404, { message: 'Not Found' });
      }
      const since = new Date(url.searchParams.get('since') ?? 0);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const listed = history
        .filter((commit) => commit.committed_at >= since)
        .sort((a, b) => b.committed_at.getTime() - a.committed_at.getTime())
        .slice((page - 1) * perPage, page * perPage);
      return send(
        res,
        200,
        listed.map((commit) => commitEntry(commit, false)),
      );
    }
    const file = /^\/repos\/([^/]+)\/([^/]+)\/(readme|contents\/(.+))$/.exec(path);
    if (req.method === 'GET' && file) {
      const repository = `${decodeURIComponent(file[1])}/${decodeURIComponent(file[2])}`;
      const files = host.repositories.has(repository) ? (host.files.get(repository) ?? new Map()) : undefined;
      if (!files) return send(res, 404, { message: 'Not Found' });
      if (file[3] === 'readme') {
        const readme = [...files.keys()].find((filePath) => /^readme\.md$/i.test(filePath));
        return readme
          ? send(res, 200, fileEntry(readme, files.get(readme)!))
          : send(res, 404, { message: 'Not Found' });
      }
      const found = contents(files, file[4].split('/').map(decodeURIComponent).join('/'));
      return found ? send(res, 200, found) : send(res, 404, { message: 'Not Found' });
    }

    const match = /^\/repos\/([^/]+)\/([^/]+)(\/issues|\/dispatches)?$/.exec(path);
    const repository = match && `${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`;
    const movedTo = repository && host.moved.get(repository);
    if (match && movedTo) {
      res.writeHead(req.method === 'GET' || req.method === 'HEAD' ? 301 : 307, {
        location: `${movedTo}${match[3] ?? ''}`,
      });
      return res.end();
    }
    if (!match || !repository || !host.repositories.has(repository)) return send(res, 404, { message: 'Not Found' });
    const route = `${req.method} ${match[3] ?? ''}`;
    switch (route) {
      case 'GET ':
        return send(res, 200, { full_name: repository, default_branch: 'main' });
      case 'POST /issues': {
        if (typeof body.title !== 'string' || !body.title)
          return send(res, 422, { message: 'Validation Failed', errors: [{ field: 'title', code: 'missing_field' }] });
        const issue = {
          repository,
          number: host.issues.length + 1,
          title: body.title,
          body: body.body as string | undefined,
          labels: body.labels as string[] | undefined,
        };
        host.issues.push(issue);
        return send(res, 201, {
          number: issue.number,
          title: issue.title,
          state: 'open',
          html_url: `${host.url}/${repository}/issues/${issue.number}`,
        });
      }
      case 'POST /dispatches':
        if (typeof body.event_type !== 'string') return send(res, 422, { message: 'Validation Failed' });
        host.dispatches.push({ repository, event_type: body.event_type, client_payload: body.client_payload });
        return send(res, 204);
      default:
        return send(res, 404, { message: 'Not Found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, FAKES_HOST, resolve));
  host.url = `http://${FAKES_HOST}:${(server.address() as AddressInfo).port}`;
  host.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return host;
}
