import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAKES_HOST } from './testEnv';

/**
 * A small stand-in for the incident-tool-a REST API (docs/integrations.md#the-incident-tool-api),
 * served over a real socket: bearer-token auth (401 otherwise), `GET /services`,
 * `GET /services/{id}/incidents?since=` (changed at or after `since`) and
 * `GET /services/{id}/oncalls`, each paged with `limit`/`offset` and answered `{<list>, more}`.
 * `outages` makes the next requests answer 502, as the tool does under load; `delayMs` holds
 * every answer that long (a sync still running).
 */
export interface FakeIncidentTool {
  url: string;
  token: string;
  services: Map<string, { name: string }>;
  /** By service id. */
  incidents: Map<string, FakeIncident[]>;
  oncalls: Map<string, FakeOncall[]>;
  requests: { path: string; query: Record<string, string>; authorization?: string }[];
  outages: number;
  delayMs: number;
  close(): Promise<void>;
}

export interface FakeIncident {
  id: string;
  title: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  urgency?: 'high' | 'low';
  severity?: 'critical' | 'high' | 'medium' | 'low' | null;
  created_at: string;
  updated_at?: string;
  resolved_at?: string | null;
  html_url?: string;
}

export interface FakeOncall {
  escalation_level: number;
  escalation_policy?: { name: string };
  schedule?: { name: string } | null;
  user: { name: string; email?: string };
  start?: string | null;
  end?: string | null;
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startFakeIncidentTool(token = `incident-token-${Date.now()}`): Promise<FakeIncidentTool> {
  const tool = {
    token,
    services: new Map(),
    incidents: new Map(),
    oncalls: new Map(),
    requests: [],
    outages: 0,
    delayMs: 0,
  } as unknown as FakeIncidentTool;
  const server: Server = createServer(async (req, res) => {
    if (tool.delayMs) await new Promise((resolve) => setTimeout(resolve, tool.delayMs));
    const url = new URL(req.url ?? '/', 'http://fake');
    tool.requests.push({
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
    });
    if (tool.outages > 0) {
      tool.outages -= 1;
      return send(res, 502, { error: { message: 'Bad Gateway' } });
    }
    if (req.headers.authorization !== `Bearer ${tool.token}`)
      return send(res, 401, { error: { message: 'Unauthorized', code: 2006 } });
    const limit = Number(url.searchParams.get('limit') ?? 25);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const page = (key: string, items: unknown[]) =>
      send(res, 200, {
        [key]: items.slice(offset, offset + limit),
        limit,
        offset,
        more: offset + limit < items.length,
      });

    if (req.method !== 'GET') return send(res, 405, { error: { message: 'Method Not Allowed' } });
    if (url.pathname === '/services')
      return page(
        'services',
        [...tool.services].map(([id, service]) => ({ id, ...service })),
      );
    const match = /^\/services\/([^/]+)\/(incidents|oncalls)$/.exec(url.pathname);
    const serviceId = match && decodeURIComponent(match[1]);
    if (!match || !serviceId || !tool.services.has(serviceId))
      return send(res, 404, { error: { message: 'Not Found' } });
    if (match[2] === 'oncalls') return page('oncalls', tool.oncalls.get(serviceId) ?? []);
    const since = Date.parse(url.searchParams.get('since') ?? '');
    const incidents = (tool.incidents.get(serviceId) ?? [])
      .filter((incident) => Number.isNaN(since) || Date.parse(incident.updated_at ?? incident.created_at) >= since)
      .map((incident) => ({ ...incident, service: { id: serviceId } }));
    return page('incidents', incidents);
  });
  await new Promise<void>((resolve) => server.listen(0, FAKES_HOST, resolve));
  tool.url = `http://${FAKES_HOST}:${(server.address() as AddressInfo).port}`;
  tool.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return tool;
}
