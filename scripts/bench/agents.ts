import { escapeLiteral, Pool } from 'pg';
import { loadConfig } from '../../core/config';
import { issueDevToken } from '../cli/devToken';
import { ONE_TENANT_LOAD, startApiProcess } from './load';

// `npm run bench:agents`: one agent push of WORKLOADS workloads (the steady state: the cluster's
// snapshot as it already is, so the push only refreshes what it holds) against its floor: the
// same rows upserted through raw `pg` in one statement, in the same tenant transaction. Each
// round pushes once through the API and runs the floor twice (the second is the run's noise:
// how far two identical cases read apart); the table shows the medians over ROUNDS rounds.
// Goals: the push within 1.5× of the floor, and under 300 ms.
const WORKLOADS = Number(process.env.BENCH_AGENT_WORKLOADS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const TENANT = 'bench-agents';
const CLUSTER = 'bench-cluster';
const RATIO_GOAL = 1.5;
const LATENCY_GOAL_MS = 300;

const workloads = Array.from({ length: WORKLOADS }, (_, i) => ({
  namespace: `team-${i % 20}`,
  kind: 'Deployment',
  name: `service-${i}`,
  labels: { 'app.kubernetes.io/name': `service-${i % 250}`, 'app.kubernetes.io/part-of': 'bench' },
  annotations: { 'deployment.kubernetes.io/revision': '3' },
  replicas: 3,
  ready_replicas: 3,
  images: [`registry.example.com/service-${i}:1.0.${i % 7}`],
  conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
}));

/** The floor's statement: the workloads' upsert alone (no entities, gone or deployments). */
const FLOOR_SQL = `
  insert into k8s_workloads as w (tenant_id, cluster_id, namespace, kind, name, labels, annotations, replicas,
    ready_replicas, images, conditions)
  select app_current_tenant(), $2, i.namespace, i.kind, i.name, i.labels, i.annotations, i.replicas,
    i.ready_replicas, i.images, i.conditions
    from jsonb_to_recordset($1::jsonb) as i(namespace text, kind text, name text, labels jsonb, annotations jsonb,
      replicas int, ready_replicas int, images text[], conditions jsonb)
  on conflict (tenant_id, cluster_id, namespace, kind, name) do update set
    labels = excluded.labels, annotations = excluded.annotations, replicas = excluded.replicas,
    ready_replicas = excluded.ready_replicas, images = excluded.images, conditions = excluded.conditions,
    last_seen_at = now(), gone_at = null`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const { token: adminToken, tenantId } = await issueDevToken(config, {
    tenant: TENANT,
    email: 'bench@bench.test',
    roles: ['admin'],
  });
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: 1 });
  try {
    const registered = await fetch(`${api.base}/api/v1/k8s/agents/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cluster_id: CLUSTER, display_name: 'Bench cluster' }),
    });
    if (registered.status !== 201) throw new Error(`registration answered ${registered.status}: free the bench tenant`);
    const { token } = (await registered.json()) as { token: string };
    const body = JSON.stringify({ cluster_id: CLUSTER, workloads });
    const push = async () => {
      const res = await fetch(`${api.base}/api/v1/k8s/agents/push`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    const rows = JSON.stringify(workloads);
    const floor = async () => {
      const client = await pg.connect();
      try {
        await client.query(`begin; set local app.tenant_id = ${escapeLiteral(tenantId)}`);
        await client.query(FLOOR_SQL, [rows, CLUSTER]);
        await client.query('commit');
      } finally {
        client.release();
      }
    };

    await push(); // the first push creates the snapshot; every measured one finds it in place
    for (let i = 0; i < 3; i++) {
      await push();
      await floor();
    }
    const figures = { push: [] as number[], floor: [] as number[], noise: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.push.push(await timed(push));
      figures.floor.push(await timed(floor));
      figures.noise.push(await timed(floor));
    }
    const [ours, base, again] = [median(figures.push), median(figures.floor), median(figures.noise)];
    console.log(
      `bench:agents — POST /k8s/agents/push of ${WORKLOADS} workloads (steady state), one client, the API in its own ` +
        `process; floor: the same rows upserted through raw pg in one statement. Medians of ${ROUNDS} rounds.`,
    );
    const row = (name: string, ms: number) =>
      `${name.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(2)}× floor`;
    console.log(row('push through the API', ours));
    console.log(row('floor: raw pg upsert', base));
    console.log(row('floor measured again (noise)', again));
    const ratio = ours / base;
    const noise = Math.abs(1 - again / base);
    console.log(
      `goal: push ≤ ${RATIO_GOAL}× floor: ${ratio.toFixed(2)}× ${ratio <= RATIO_GOAL + noise ? 'met' : 'NOT MET'}; ` +
        `push < ${LATENCY_GOAL_MS} ms: ${ours.toFixed(1)} ms ${ours < LATENCY_GOAL_MS ? 'met' : 'NOT MET'}`,
    );
  } finally {
    await pg.end();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
