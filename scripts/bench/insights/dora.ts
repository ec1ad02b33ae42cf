import knex, { type Knex } from 'knex';
import { Pool } from 'pg';
import { loadConfig, type Config } from '../../../core/config';
import { migrationConfigFor } from '../../../core/migrations';
import { withTenant } from '../../../db/tenancy';
import { createPool } from '../../../db/pool';
import { benchApiKey } from '../benchCaller';
import { capturedFloor } from '../capturedStatements';
import { catalogAdmin, ENTITIES, TENANT } from '../catalogTenant';
import { get, measureSideBySide, ONE_TENANT_LOAD, startApiProcess, type Figures } from '../load';

// GET /insights/dora on the catalog tenant (ENTITIES seeded entities) with a 90-day history seeded
// behind the API: DEPLOYED entities with a workload each, DEPLOYMENTS_EACH agent deployments per
// entity, a completed run of a deploying mold per entity (a failed one per tenth), an incident two
// hours after every third deployment of every fourth entity, and LINKED entities with a repository and a commit per deployment whose image
// tags name the commits. Ours: the request through the API (its own process, cached API key);
// floor: the statements it sends, captured from an in-process API and replayed through raw `pg`
// in the same tenant transaction; the floor measured again is the noise. One client, REQUESTS
// requests per case, after a warm-up. Goals: p95 within 1.5× the floor's and under 300 ms.
const DEPLOYED = Number(process.env.BENCH_DORA_ENTITIES ?? 20_000);
const DEPLOYMENTS_EACH = 15;
const LINKED = Math.min(DEPLOYED, Number(process.env.BENCH_DORA_LINKED ?? 5_000));
const REQUESTS = Number(process.env.BENCH_DORA_REQUESTS ?? 40);
const RATIO_GOAL = 1.5;
const P95_GOAL_MS = 300;
const MARKER = 'bench-dora';

/**
 * The history, once per tenant (the marker integration says it is there; entities by id order),
 * and what the cases read: the team owning most entities, and an entity with commits.
 */
async function ensureHistory(config: Config, tenantId: string): Promise<{ team: string; entityId: string }> {
  const db = createPool(config.database.appUrl, 1);
  try {
    const seeded = await withTenant(db, tenantId, async (trx) => {
      if (await trx('integrations').where({ name: MARKER }).first('id')) return false;
      await seedHistory(trx);
      return true;
    });
    // As autovacuum would after such inserts: statistics, and the visibility map index-only scans need.
    if (seeded) await vacuumAnalyze(config, SEEDED_TABLES);
    return await withTenant(db, tenantId, async (trx) => {
      const [team] = await trx('entities')
        .whereIn('owner', trx('teams').select('slug'))
        .groupBy('owner')
        .orderByRaw('count(*) desc')
        .limit(1)
        .pluck('owner');
      const linked = await trx('entities as e')
        .join('repositories as r', 'r.html_url', trx.raw(`e.links->0->>'url'`))
        .first<{ id: string }>('e.id');
      return { team, entityId: linked!.id };
    });
  } finally {
    await db.destroy();
  }
}

const SEEDED_TABLES = ['k8s_workloads', 'k8s_deployments', 'runs', 'incidents', 'repositories', 'repository_commits'];

async function vacuumAnalyze(config: Config, tables: string[]): Promise<void> {
  const owner = knex(migrationConfigFor(config));
  try {
    for (const table of tables) await owner.raw(`vacuum analyze ${table}`);
  } finally {
    await owner.destroy();
  }
}

async function seedHistory(trx: Knex.Transaction): Promise<void> {
  const started = Date.now();
  await trx.raw('set local statement_timeout = 0');
  const values = { marker: MARKER, deployed: DEPLOYED, linked: LINKED, each: DEPLOYMENTS_EACH };
  for (const statement of [
    `insert into integrations (tenant_id, name, type) values (app_current_tenant(), :marker, 'incident-tool-a'),
           (app_current_tenant(), :marker || '-source', 'vcs-host-a')`,
    `insert into k8s_agents (tenant_id, cluster_id, display_name) values (app_current_tenant(), :marker, :marker)`,
    `create temporary table bench_entities on commit drop as
           select row_number() over (order by id) as n, id, service_id, links->0->>'url' as url
             from entities order by id limit :deployed`,
    `insert into k8s_workloads (tenant_id, cluster_id, namespace, kind, name, entity_id, images)
           select app_current_tenant(), :marker, 'bench', 'Deployment', 'w-' || n, id, array['registry/w-' || n || ':v0']
             from bench_entities`,
    `insert into repositories (tenant_id, integration_id, provider, full_name, owner, name, html_url, crawl_status)
           select app_current_tenant(), i.id, 'vcs-host-a', 'bench/' || e.service_id, 'bench', e.service_id, e.url, 'crawled'
             from bench_entities e, integrations i where i.name = :marker || '-source' and e.n <= :linked
           on conflict do nothing`,
    `-- Deployment j of entity n at day 6j - 5 of the 90, each carrying commit j (1 to 5 hours older).
         create temporary table bench_deployments on commit drop as
           select e.n, e.id as entity_id, w.id as workload_id, j,
             now() - interval '90 days' + make_interval(days => 6 * j - 5, mins => (e.n % 600)::int) as deployed_at,
             md5('c' || e.n || '-' || j) || left(md5('d' || e.n || '-' || j), 8) as sha
             from bench_entities e join k8s_workloads w on w.entity_id = e.id and w.cluster_id = :marker,
             generate_series(1, :each) as j`,
    `insert into k8s_deployments (tenant_id, cluster_id, workload_id, entity_id, previous_images, images, deployed_at)
           select app_current_tenant(), :marker, workload_id, entity_id, array['registry/w-' || n || ':v0'],
             array['registry/w-' || n || ':' || case when n <= :linked then left(sha, 7) else 'v' || j end], deployed_at
             from bench_deployments`,
    `insert into repository_commits (tenant_id, repository_id, sha, author_name, author_email, authored_at,
             committed_at, additions, deletions)
           select app_current_tenant(), r.id, d.sha, 'Bench', 'bench@bench.test', c.at, c.at, 10, 2
             from bench_deployments d join bench_entities e on e.n = d.n
             join repositories r on r.html_url = e.url,
             lateral (select d.deployed_at - make_interval(hours => 1 + d.j % 5) as at) c
            where d.n <= :linked`,
    `insert into molds (tenant_id, slug, name, created_by, deploys) values (app_current_tenant(), :marker, :marker, 'bench', true)`,
    `insert into runs (tenant_id, mold_id, mold_slug, mold_version, mold_snapshot, parameters, status, started_by,
             workflow_id, created_at, started_at, finished_at)
           select app_current_tenant(), m.id, m.slug, 1, '{}', jsonb_build_object('entity_id', e.id), s.status, 'bench',
             'bench-' || e.n || '-' || s.status, f.at, f.at, f.at
             from bench_entities e cross join molds m,
             lateral (select 'completed' as status union all select 'failed' where e.n % 10 = 0) s,
             lateral (select now() - make_interval(days => (e.n % 88)::int + 1) as at) f
            where m.slug = :marker`,
    `insert into incidents (tenant_id, integration_id, entity_id, external_id, service_id, title, status, opened_at, resolved_at)
           select app_current_tenant(), i.id, d.entity_id, 'I-' || d.n || '-' || d.j, 'S-' || d.n, 'bench', 'resolved',
             d.deployed_at + interval '2 hours', d.deployed_at + interval '2 hours' + make_interval(mins => (d.n % 600)::int)
             from bench_deployments d, integrations i
            where i.name = :marker and d.n % 4 = 0 and d.j % 3 = 0`,
  ])
    await trx.raw(statement, values);
  console.log(`seeded the DORA history in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

export async function bench(): Promise<void> {
  const config = loadConfig();
  const { token, tenantId } = await catalogAdmin(config);
  const { team, entityId } = await ensureHistory(config, tenantId);
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: 1 });
  let revokeKey = async () => {};
  try {
    const apiKey = await benchApiKey(api.base, token, ['catalog:read'], 'bench-dora');
    revokeKey = apiKey.revoke;
    const authorization = `Bearer ${apiKey.token}`;
    const cases: [string, string][] = [
      ['tenant, 90d', '/api/v1/insights/dora?window=90d'],
      ['tenant, 30d', '/api/v1/insights/dora?window=30d'],
      [`team ${team}, 30d`, `/api/v1/insights/dora?window=30d&team_id=${team}`],
      ['entity, 90d', `/api/v1/insights/dora?window=90d&entity_id=${entityId}`],
    ];
    console.log(
      `bench:insights dora — GET /insights/dora on ${ENTITIES} entities (tenant ${TENANT}; ${DEPLOYED} deployed ` +
        `${DEPLOYMENTS_EACH}× over 90 days, ${LINKED} with commits), the API in its own process; floor: its ` +
        `statements through raw pg in the same tenant transaction; one client, ${REQUESTS} requests a case (p50 / p95 ms)`,
    );
    const ms = (f: Figures) => `${f.p50.toFixed(1)} / ${f.p95.toFixed(1)}`.padStart(16);
    console.log(
      `${'case'.padEnd(24)} ${'ours'.padStart(16)} ${'floor'.padStart(16)} ${'noise'.padStart(16)}  p95 ×  goal`,
    );
    for (const [name, path] of cases) {
      const floorOnce = await capturedFloor(config, pg, path, authorization, 'k8s_deployments');
      const oursOnce = () => get(`${api.base}${path}`, { authorization });
      const [ours, floor, noise] = await measureSideBySide([oursOnce, floorOnce, floorOnce], {
        requests: REQUESTS,
        concurrency: 1,
      });
      const ratio = ours.p95 / floor.p95;
      const met = ratio <= RATIO_GOAL + Math.abs(1 - noise.p95 / floor.p95) && ours.p95 < P95_GOAL_MS;
      console.log(
        `${name.padEnd(24)} ${ms(ours)} ${ms(floor)} ${ms(noise)}  ${ratio.toFixed(2).padStart(5)}  ${met ? 'met' : 'NOT MET'}`,
      );
    }
    console.log(`goal: p95 ≤ ${RATIO_GOAL}× the floor's (beyond the noise) and < ${P95_GOAL_MS} ms`);
  } finally {
    await revokeKey();
    await pg.end();
    api.proc.kill();
  }
}

if (require.main === module)
  bench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
