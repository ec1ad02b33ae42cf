import { randomUUID } from 'node:crypto';
import { callApi, sessionToken, startApi, type Reply, type TestApi } from './harness';

// What the manifest suites share: an API on a socket, sessions of each catalog role in tenant A
// and an admin in tenant B, and helpers to send YAML and read entities back.

type Session = { token: string; tenantId: string; userId: string };

export interface ManifestsSuite {
  api: TestApi;
  /** Unique per suite run: service ids derive from it. */
  run: string;
  /** catalog:admin */
  adminA: Session;
  /** catalog:write */
  editorA: Session;
  /** catalog:read */
  viewerA: Session;
  adminB: Session;
}

/** Registers the hooks of a manifests suite. Read `suite` after beforeAll. */
export function useManifestsSuite() {
  const run = randomUUID().slice(0, 8);
  const suite = { run } as ManifestsSuite;
  beforeAll(async () => {
    suite.api = await startApi();
    const tenant = `manifests-a-${run}`;
    suite.adminA = await sessionToken({ tenant, email: 'admin@a.test', roles: ['admin'] });
    suite.editorA = await sessionToken({ tenant, email: 'editor@a.test', roles: ['editor'] });
    suite.viewerA = await sessionToken({ tenant, email: 'viewer@a.test', roles: ['viewer'] });
    suite.adminB = await sessionToken({ tenant: `manifests-b-${run}`, email: 'admin@b.test', roles: ['admin'] });
  });
  afterAll(() => suite.api?.close());

  const call = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
    callApi(suite.api, token, method, path, body);

  /** A service id unique to this suite run. */
  const uniqueId = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

  /** POST `content` to a manifest route as `token` (tenant A's editor by default). */
  const send = (path: string, content: string, extra: Record<string, unknown> = {}, token = suite.editorA.token) =>
    call(token, 'POST', path, { content, ...extra });

  /** The entity's changelog entries, newest first. */
  async function changelog(ref: string): Promise<{ field: string; action: string; new_value: string | null }[]> {
    const res = await call(suite.adminA.token, 'GET', `/entities/${ref}/changelog`);
    expect(res.status).toBe(200);
    return res.body.entries;
  }

  /** The entity's outgoing relations as `type target`, sorted. */
  async function outgoing(ref: string, token = suite.adminA.token): Promise<string[]> {
    const res = await call(token, 'GET', `/entities/${ref}/relations`);
    expect(res.status).toBe(200);
    return (res.body.relations as { type: string; direction: string; entity: { service_id: string } }[])
      .filter((r) => r.direction === 'outgoing')
      .map((r) => `${r.type} ${r.entity.service_id}`)
      .sort();
  }

  return { suite, call, uniqueId, send, changelog, outgoing };
}
