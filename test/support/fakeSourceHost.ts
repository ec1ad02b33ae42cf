import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small stand-in for the vcs-host-a REST API, served over a real socket: bearer-token auth,
 * repositories, issue creation and repository dispatch events, with the host's status codes
 * (401 bad credentials, 404 unknown repository, 422 invalid issue, 201/204 on success).
 * `outages` makes the next requests answer 502, as the host does under load.
 */
export interface FakeSourceHost {
  url: string;
  token: string;
  repositories: Set<string>;
  requests: { method: string; path: string; authorization?: string; body: unknown }[];
  issues: { repository: string; number: number; title: string; body?: string; labels?: string[] }[];
  dispatches: { repository: string; event_type: string; client_payload?: unknown }[];
  outages: number;
  close(): Promise<void>;
}

const send = (res: ServerResponse, status: number, body?: unknown) => {
  res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
  res.end(body === undefined ? undefined : JSON.stringify(body));
};

export async function startFakeSourceHost(token = `vcs-token-${Date.now()}`): Promise<FakeSourceHost> {
  const host = { token, repositories: new Set<string>(), requests: [], issues: [], dispatches: [], outages: 0 } as unknown as FakeSourceHost;
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
    if (!match || !repository || !host.repositories.has(repository)) return send(res, 404, { message: 'Not Found' });
    const route = `${req.method} ${match[3] ?? ''}`;
    switch (route) {
      case 'GET ':
        return send(res, 200, { full_name: repository, default_branch: 'main' });
      case 'POST /issues': {
        if (typeof body.title !== 'string' || !body.title) return send(res, 422, { message: 'Validation Failed', errors: [{ field: 'title', code: 'missing_field' }] });
        const issue = { repository, number: host.issues.length + 1, title: body.title, body: body.body as string | undefined, labels: body.labels as string[] | undefined };
        host.issues.push(issue);
        return send(res, 201, { number: issue.number, title: issue.title, state: 'open', html_url: `${host.url}/${repository}/issues/${issue.number}` });
      }
      case 'POST /dispatches':
        if (typeof body.event_type !== 'string') return send(res, 422, { message: 'Validation Failed' });
        host.dispatches.push({ repository, event_type: body.event_type, client_payload: body.client_payload });
        return send(res, 204);
      default:
        return send(res, 404, { message: 'Not Found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  host.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return host;
}
