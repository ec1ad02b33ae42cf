import { randomUUID } from 'node:crypto';
import { createTeamsCache } from '../../api/teams/cache';
import { withTenant } from '../../db/tenancy';
import { callApi, sessionToken, startApi, type TestApi } from './harness';

// What the teams suites share: an API whose /teams cache runs on a clock the suite controls,
// session tokens of two fresh tenants, and helpers to create and list teams.

type Session = { token: string; tenantId: string; userId: string };

/** The state of a teams suite; the sessions are set by its beforeAll. */
export interface TeamsSuite {
  api: TestApi;
  /** Tenant name suffix, unique per suite run: tests derive names from it. */
  run: string;
  tenantA: string;
  tenantB: string;
  adminA: Session;
  viewerA: Session;
  adminB: Session;
}

/**
 * Registers the hooks of a teams suite: the API on a socket (`startApi`) with its /teams cache on
 * the suite's clock (see `advanceClock`), and sessions of tenant A's admin and viewer and of
 * tenant B's admin, in tenants unique to this run. Read `suite` after beforeAll.
 */
export function useTeamsSuite() {
  const run = randomUUID().slice(0, 8);
  const suite = { run, tenantA: `teams-a-${run}`, tenantB: `teams-b-${run}` } as TeamsSuite;
  let clock = Date.now();
  beforeAll(async () => {
    suite.api = await startApi();
    // The app's /teams cache runs on a clock this suite controls.
    suite.api.deps.teamsCache = createTeamsCache(suite.api.deps.changes, () => clock);
    suite.adminA = await sessionToken({ tenant: suite.tenantA, email: 'admin@a.test', roles: ['admin'] });
    suite.viewerA = await sessionToken({ tenant: suite.tenantA, email: 'viewer@a.test', roles: ['viewer'] });
    suite.adminB = await sessionToken({ tenant: suite.tenantB, email: 'admin@b.test', roles: ['admin'] });
  });
  afterAll(() => suite.api?.close());

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callApi(suite.api, token, method, path, body);

  async function createTeam(body: Record<string, unknown>, token = suite.adminA.token) {
    const res = await call(token, 'POST', '/admin/teams', body);
    expect(res.status).toBe(201);
    return res.body as { id: string; slug: string; name: string; parent_id: string | null };
  }

  const uniqueName = (prefix: string) => `${prefix} ${randomUUID().slice(0, 6)}`;
  const slugsOf = (body: { teams: { slug: string }[] }) => body.teams.map((t) => t.slug);

  /** A team written straight to the database: no API write, so no cache drop. */
  async function insertBehindTheApi(tenantId: string): Promise<string> {
    const slug = `hidden-${randomUUID().slice(0, 8)}`;
    await withTenant(suite.api.deps.db, tenantId, (trx) =>
      trx('teams').insert({ tenant_id: tenantId, name: slug, slug }),
    );
    return slug;
  }

  /** Moves the /teams cache's clock on by `ms` (it never moves by itself). */
  const advanceClock = (ms: number) => {
    clock += ms;
  };

  return { suite, call, createTeam, uniqueName, slugsOf, insertBehindTheApi, advanceClock };
}
