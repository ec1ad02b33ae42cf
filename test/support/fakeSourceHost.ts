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
  close(): Promise<void>;
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
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    host.requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
    if (host.outages > 0) {
      host.outages -= 1;
      return send(res, 502, { message: 'Server Error' });
    }
    if (req.headers.authorization !== `Bearer ${host.token}`) return send(res, 401, { message: 'Bad credentials' });

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
