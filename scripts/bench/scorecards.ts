import { escapeLiteral } from 'pg';
import pino from 'pino';
import { loadConfig } from '../../core/config';
import type { Check } from '../../core/scorecards/checks';
import { ensureDefaults, loadScoringConfig } from '../../core/scorecards/configStore';
import { FACTS_SQL } from '../../core/scorecards/factsStore';
import { requestFullRescore } from '../../core/scorecards/queueStore';
import type { ScoredCategory, ScoredRule } from '../../core/scorecards/scoringRules';
import { FINDING_SEVERITIES, type GradingThresholds } from '../../core/scorecards/types';
import { withTenant } from '../../db/tenancy';
import { createWorkerClients } from '../../workers/clients';
import { createPoolWorkers } from '../../workers/pools';
import { startScorecardWaker } from '../../workers/notifiedLoops';
import { catalogAdmin, TENANT } from './catalogTenant';
import { percentile } from './load';

// `npm run bench:scorecards`: a full re-score of the catalog tenant's ENTITIES entities (seeded as
// bench:catalog seeds them) through the real pipeline: a queued full request, the platform
// worker's waker, the tenant's scoreTenant workflow and its batch activities, until every entity
// has a new result. Its floor: the same checks of the same rules as one SQL statement over the
// same rows, writing the same table (score, grade and pass/fail per rule; no reasons). Each round
// runs ours once and the floor twice (the second is the noise); medians over ROUNDS rounds after
// a warm-up round. The tenant's default rules lose their finding severities first: opening
// findings is a one-off of an entity's first failure, not the cost of scoring. Goals: ≥ 0.5× the floor's
// entities/s, and the pass well under a minute (< 60 s). Then LATENCY_WRITES single-entity
// writes, each timed from its commit to its new grade being stored (p50, p95), and 5 more while
// a full pass of the tenant is under way.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LATENCY_WRITES = Number(process.env.BENCH_SCORECARD_WRITES ?? 20);
const RATIO_GOAL = 0.5;
const PASS_GOAL_S = 60;

const severityOrder = `array[${FINDING_SEVERITIES.map(escapeLiteral).join(', ')}]`;

/** A check as a SQL boolean over the facts row `f` (the floor's copy of core/scorecards/checks.ts). */
function checkSql(check: Check): string {
  switch (check.kind) {
    case 'field_set':
      return `coalesce(btrim(f.${check.field}), '') <> ''`;
    case 'tag_present':
      return `${escapeLiteral(check.tag)} = any(f.tags)`;
    case 'min_links':
      return `f.link_count >= ${check.count}`;
    case 'has_docs':
      return 'f.has_readme or f.has_crawled_docs';
    case 'no_deprecated_dependencies':
      return 'cardinality(f.deprecated_dependencies) = 0';
    case 'lifecycle_in':
      return `coalesce(f.lifecycle = any(array[${check.values.map(escapeLiteral).join(', ')}]), false)`;
    case 'workload_seen_within':
      return `coalesce(f.last_workload_seen_at > now() - interval '${check.days} days', false)`;
    case 'no_open_finding_above':
      return `f.worst_open_finding is null or array_position(${severityOrder}, f.worst_open_finding) >= array_position(${severityOrder}, ${escapeLiteral(check.severity)})`;
    case 'bus_factor':
      return `coalesce(f.bus_factor >= ${check.min ?? 1} and f.bus_factor <= ${check.max ?? 1000}, false)`;
  }
}

/**
 * The floor: every entity of the tenant scored by the same rules in one INSERT ... SELECT. The
 * facts are materialized once: inlined, each check's reference to them ran their subqueries again.
 */
function floorSql(categories: ScoredCategory[], rules: ScoredRule[], grading: GradingThresholds): string {
  const passed = rules.map((rule, i) => `(${checkSql(rule.check)}) as p${i}`).join(',\n      ');
  const used = categories.filter((category) => rules.some((rule) => rule.category_id === category.id));
  const categoryScore = (category: ScoredCategory) => {
    const own = rules.map((rule, i) => ({ rule, i })).filter(({ rule }) => rule.category_id === category.id);
    const total = own.reduce((sum, { rule }) => sum + rule.weight, 0);
    return `(100.0 * (${own.map(({ rule, i }) => `${rule.weight} * c.p${i}::int`).join(' + ')}) / ${total})`;
  };
  const totalWeight = used.reduce((sum, category) => sum + category.weight, 0);
  const score = `round((${used.map((category) => `${category.weight} * ${categoryScore(category)}`).join(' + ')}) / ${totalWeight}, 2)`;
  const results = rules
    .map((rule, i) => `jsonb_build_object('rule_id', ${escapeLiteral(rule.id)}, 'passed', c.p${i})`)
    .join(', ');
  return `
    with f as materialized (${FACTS_SQL} where e.tenant_id = app_current_tenant())
    insert into entity_scorecards (entity_id, tenant_id, score, grade, category_scores, rule_results, entity_version, evaluated_at)
    select id, app_current_tenant(), score,
      case when score >= ${grading.a_plus} then 'A+' when score >= ${grading.a} then 'A' when score >= ${grading.b} then 'B'
        when score >= ${grading.c} then 'C' when score >= ${grading.d} then 'D' else 'F' end,
      '[]', rule_results, version, now()
    from (
      select f.id, f.version, ${score} as score, jsonb_build_array(${results}) as rule_results
      from f cross join lateral (select ${passed}) c
    ) s
    on conflict (entity_id) do update set score = excluded.score, grade = excluded.grade,
      rule_results = excluded.rule_results, entity_version = excluded.entity_version, evaluated_at = excluded.evaluated_at`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const config = loadConfig();
  const { tenantId } = await catalogAdmin(config);
  const clients = createWorkerClients(config, { poolMax: 4 });
  const { db } = clients;
  const inTenant = <T>(work: Parameters<typeof withTenant<T>>[2]) => withTenant(db, tenantId, work);

  // The default set without finding severities, and no queued rows left by the seed: the
  // warm-up's full pass scores every entity.
  await inTenant(async (trx) => {
    await ensureDefaults(trx, tenantId);
    await trx('scorecard_rules').update({ severity: null, finding_type: null });
    await trx('scorecard_queue').delete();
  });
  const workers = await createPoolWorkers(['platform'], config, clients);
  const running = workers.run();
  const waker = await startScorecardWaker(config, clients, workers.temporal, pino({ level: 'silent' }));
  try {
    const entities = Number(
      (await inTenant((trx) => trx('entities').count<{ count: string }[]>('* as count')))[0].count,
    );
    const scoredSince = async (since: Date) =>
      Number(
        (
          await inTenant((trx) =>
            trx('entity_scorecards').where('evaluated_at', '>=', since).count<{ count: string }[]>('* as count'),
          )
        )[0].count,
      );
    /** Ours: a full re-score request, timed until every entity holds a result evaluated after it. */
    const ours = async (): Promise<number> => {
      const started = await inTenant(async (trx) => {
        const [{ now }] = (await trx.raw<{ rows: { now: Date }[] }>('select now()')).rows;
        await requestFullRescore(trx, tenantId);
        return now;
      });
      const t0 = performance.now();
      while ((await scoredSince(started)) < entities) await sleep(250);
      return (performance.now() - t0) / 1000;
    };

    console.log(`warm-up: scoring the ${entities} seeded entities once (their first scores, the default set)`);
    await ours();
    const { categories, rules, grading } = await inTenant((trx) => loadScoringConfig(trx));
    const floorStatement = floorSql(categories, rules, grading);
    const floor = async (): Promise<number> => {
      const t0 = performance.now();
      await inTenant(async (trx) => {
        // One statement's JIT compilation is not the cost of the checks.
        await trx.raw('set local jit = off');
        await trx.raw(floorStatement);
      });
      return (performance.now() - t0) / 1000;
    };
    await ours();
    await floor();

    const figures = { ours: [] as number[], floor: [] as number[], noise: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.ours.push(await ours());
      figures.floor.push(await floor());
      figures.noise.push(await floor());
    }
    const [oursS, floorS, noiseS] = [median(figures.ours), median(figures.floor), median(figures.noise)];
    const rate = (seconds: number) => entities / seconds;
    console.log(
      `bench:scorecards — a full re-score of ${entities} entities (tenant ${TENANT}, ${rules.length} rules in ` +
        `${categories.length} categories): queued request → waker → scoreTenant workflow → batches of ` +
        `${config.scorecards.batchSize}, until every entity has a new result; floor: the same checks as one SQL ` +
        `INSERT ... SELECT over the same rows. Medians of ${ROUNDS} rounds.`,
    );
    const row = (name: string, seconds: number) =>
      `${name.padEnd(40)} ${seconds.toFixed(1).padStart(6)} s  ${rate(seconds).toFixed(0).padStart(7)} entities/s  ` +
      `${(rate(seconds) / rate(floorS)).toFixed(2)}× floor`;
    console.log(row('full re-score through the workflow', oursS));
    console.log(row('floor: one SQL pass', floorS));
    console.log(row('floor measured again (noise)', noiseS));
    const ratio = rate(oursS) / rate(floorS);
    const noise = Math.abs(1 - noiseS / floorS);
    console.log(
      `goal: ≥ ${RATIO_GOAL}× the floor's entities/s: ${ratio.toFixed(2)}× ${ratio + noise >= RATIO_GOAL ? 'met' : 'NOT MET'}; ` +
        `pass < ${PASS_GOAL_S} s: ${oursS.toFixed(1)} s ${oursS < PASS_GOAL_S ? 'met' : 'NOT MET'}`,
    );

    // Write → new grade: an entity's owner flips, committed as an API write commits it (the
    // trigger queues it); timed until its stored result is of that version. Idle first, then
    // while a full pass of the tenant is under way.
    const ids: string[] = await inTenant((trx) => trx('entities').orderBy('id').limit(LATENCY_WRITES).pluck('id'));
    const writeToGrade = async (id: string): Promise<number> => {
      const t0 = performance.now();
      const version = await inTenant(async (trx) => {
        const [row] = await trx('entities')
          .where({ id })
          .update({ owner: trx.raw(`case when owner is null then 'bench-team' end`), updated_at: trx.fn.now() })
          .returning('updated_at');
        return row.updated_at as Date;
      });
      for (;;) {
        const stored = await inTenant((trx) =>
          trx('entity_scorecards').where({ entity_id: id }).first('entity_version'),
        );
        if (stored && new Date(stored.entity_version).getTime() >= version.getTime()) break;
        await sleep(5);
      }
      return performance.now() - t0;
    };
    const summary = (latencies: number[]) => {
      const sorted = [...latencies].sort((a, b) => a - b);
      return `p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${percentile(sorted, 95).toFixed(0)} ms`;
    };
    const idle: number[] = [];
    for (const id of ids) idle.push(await writeToGrade(id));
    console.log(`write → new grade, ${ids.length} single-entity writes one after the other: ${summary(idle)}`);
    // The last entities in id order: the pass itself reaches them last.
    const last: string[] = await inTenant((trx) => trx('entities').orderBy('id', 'desc').limit(5).pluck('id'));
    await inTenant((trx) => requestFullRescore(trx, tenantId));
    await sleep(500);
    const duringPass: number[] = [];
    for (const id of last) duringPass.push(await writeToGrade(id));
    console.log(`the same during a full pass of the tenant, ${duringPass.length} writes: ${summary(duringPass)}`);
  } finally {
    await waker.stop();
    workers.shutdown();
    await running;
    await clients.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
