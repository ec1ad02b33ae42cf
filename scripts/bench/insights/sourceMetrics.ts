import { Pool } from 'pg';
import { loadConfig } from '../../../core/config';
import { createPool } from '../../../db/pool';
import { withTenant } from '../../../db/tenancy';
import { benchApiKey } from '../benchCaller';
import { catalogAdmin, ENTITIES, TENANT } from '../catalogTenant';
import { capturedFloor } from '../capturedStatements';
import { get, measureSideBySide, ONE_TENANT_LOAD, REQUESTS, startApiProcess } from '../load';

// The bus factor's reads (bench:insights, "source metrics") on the tenant of ENTITIES seeded
// entities: one repository's figure over 90 and 365 days (a year of COMMITS commits by AUTHORS
// authors, beside REPOSITORIES other repositories with a year of history each), the tenant-wide
// list of entities by kept bus factor, and /entities?bus_factor=1 (every entity has a kept
// figure). Floor: the statements the API sends for the same request, replayed through raw `pg` in
// the same tenant transaction, measured twice (the second is the noise). One client, medians of
// REQUESTS/4 requests in rounds. Goals: p95 ≤ 1.5× the floor's and under 300 ms.
const REPOSITORIES = Number(process.env.BENCH_BUS_FACTOR_REPOSITORIES ?? 1_000);
const COMMITS = Number(process.env.BENCH_BUS_FACTOR_COMMITS ?? 20_000);
const AUTHORS = 40;
const INTEGRATION = 'bench-bus-factor';
const RATIO_GOAL = 1.5;
const P95_GOAL_MS = 300;

/**
 * The history the reads go over, once (kept across runs): REPOSITORIES repositories with 50
 * commits each over the year, the measured one with COMMITS, and a kept figure for every entity.
 * Returns the measured repository's id.
 */
async function ensureHistory(appUrl: string, tenantId: string): Promise<string> {
  const db = createPool(appUrl, 2);
  try {
    return await withTenant(db, tenantId, async (trx) => {
      const existing = await trx('repositories').where({ full_name: 'bench/bus-factor' }).first('id');
      if (existing) return existing.id as string;
      const [integration] = await trx('integrations')
        .insert({ tenant_id: tenantId, name: INTEGRATION, type: 'vcs-host-a', status: 'inactive' })
        .returning('id');
      await trx.raw(
        `insert into repositories (tenant_id, integration_id, provider, full_name, owner, name, html_url, crawl_status)
         select ?, ?, 'vcs-host-a', 'bench/bf-' || i, 'bench', 'bf-' || i, 'https://bench.invalid/bench/bf-' || i, 'crawled'
         from generate_series(0, ?) i`,
        [tenantId, integration.id, REPOSITORIES],
      );
      await trx.raw(`update repositories set full_name = 'bench/bus-factor' where full_name = 'bench/bf-0'`);
      // Authors by a skewed share (a few write most); `where c > 0` draws anew for each commit.
      const commits = (perRepository: string, repositories: string) => `
        insert into repository_commits (tenant_id, repository_id, sha, author_name, author_email, authored_at,
          committed_at, additions, deletions)
        select ?, r.id, left(encode(sha256((r.id::text || ':' || c)::bytea), 'hex'), 40),
          'Author ' || a, 'author' || a || '@bench.test', t, t, (c * 7) % 200, (c * 3) % 50
        from repositories r, generate_series(1, ${perRepository}) c,
          lateral (select floor(${AUTHORS} ^ random())::int - 1 as a, now() - random() * interval '365 days' as t where c > 0) x
        where ${repositories}`;
      await trx.raw(commits('50', `r.full_name like 'bench/bf-%'`), [tenantId]);
      await trx.raw(commits(String(COMMITS), `r.full_name = 'bench/bus-factor'`), [tenantId]);
      await trx.raw(
        `insert into entity_bus_factors (tenant_id, entity_id, bus_factor)
         select ?, id, case when get_byte(uuid_send(id), 15) % 7 = 6 then null else 1 + get_byte(uuid_send(id), 15) % 7 end
         from entities on conflict (entity_id) do nothing`,
        [tenantId],
      );
      await trx.raw('analyze repository_commits; analyze entity_bus_factors');
      return (await trx('repositories').where({ full_name: 'bench/bus-factor' }).first('id')).id as string;
    });
  } finally {
    await db.destroy();
  }
}

export async function bench(): Promise<void> {
  const config = loadConfig();
  const { token, tenantId } = await catalogAdmin(config);
  const repositoryId = await ensureHistory(config.database.ownerUrl, tenantId);
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: 2 });
  let revokeKey = async () => {};
  try {
    const apiKey = await benchApiKey(api.base, token, ['catalog:read'], 'bench-bus-factor');
    revokeKey = apiKey.revoke;
    const authorization = `Bearer ${apiKey.token}`;
    const cases: [string, string, string][] = [
      ['repository, 90d', `/api/v1/insights/bus-factor?repository_id=${repositoryId}&window=90d`, 'repository_commits'],
      [
        'repository, 365d',
        `/api/v1/insights/bus-factor?repository_id=${repositoryId}&window=365d`,
        'repository_commits',
      ],
      ['entities by bus factor', '/api/v1/insights/bus-factor?limit=50', 'entity_bus_factors'],
      ['/entities?bus_factor=1', '/api/v1/entities?bus_factor=1&limit=20', 'entities'],
    ];
    console.log(
      `bench:insights (bus factor) — ${ENTITIES} entities (tenant ${TENANT}), every one with a kept figure; the ` +
        `measured repository has ${COMMITS} commits over a year by ${AUTHORS} authors, beside ${REPOSITORIES} ` +
        `repositories of 50. Floor: the API's statements through raw pg in the same tenant transaction, measured ` +
        `again as the noise. One client, ${REQUESTS / 4} requests each.`,
    );
    console.log(
      `${'case'.padEnd(24)} ${'ours p50/p95 ms'.padStart(16)} ${'floor p50/p95'.padStart(16)} ` +
        `${'noise p95'.padStart(10)} ${'p95 ×'.padStart(6)}  goal (≤ ${RATIO_GOAL}× and < ${P95_GOAL_MS} ms p95)`,
    );
    for (const [name, path, table] of cases) {
      const floorOnce = await capturedFloor(config, pg, path, authorization, table);
      const oursOnce = () => get(`${api.base}${path}`, { authorization });
      const [ours, floor, noise] = await measureSideBySide([oursOnce, floorOnce, floorOnce], {
        requests: REQUESTS / 4,
        concurrency: 1,
      });
      const ratio = ours.p95 / floor.p95;
      const noiseShare = Math.abs(1 - noise.p95 / floor.p95);
      const met = ratio - noiseShare <= RATIO_GOAL && ours.p95 < P95_GOAL_MS;
      const ms = (f: { p50: number; p95: number }) => `${f.p50.toFixed(2)} / ${f.p95.toFixed(2)}`;
      console.log(
        `${name.padEnd(24)} ${ms(ours).padStart(16)} ${ms(floor).padStart(16)} ${noise.p95.toFixed(2).padStart(10)} ` +
          `${ratio.toFixed(2).padStart(5)}×  ${met ? 'met' : 'NOT MET'}`,
      );
    }
  } finally {
    await revokeKey();
    await pg.end();
    api.proc.kill();
  }
}

if (require.main === module) {
  bench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
