import { escapeLiteral, Pool } from 'pg';
import pino from 'pino';
import { loadConfig, type Config } from '../../core/config';
import { createWorkerClients } from '../../workers/clients';
import { startOutboxDrain } from '../../workers/notifiedLoops';
import { issueDevToken } from '../cli/devToken';
import { mintDevLicenseKey } from '../cli/licenseKey';
import { ONE_TENANT_LOAD, percentile, startApiProcess } from './load';

// `npm run bench:agents`: one agent push of WORKLOADS workloads (the steady state: the cluster's
// snapshot as it already is, so the push only refreshes what it holds) against its floor: the
// same rows upserted through raw `pg` in one statement, in the same tenant transaction. Each
// round pushes once through the API and runs the floor twice (the second is the run's noise:
// how far two identical cases read apart); the table shows the medians over ROUNDS rounds.
// Goals: the push within 1.5× of the floor, and under 300 ms.
// Then the fleet: FLEET_AGENTS agents, each pushing its own cluster's WORKLOADS workloads as fast
// as it can for FLEET_SECONDS (waiting a refusal's Retry-After, as an agent does), with the outbox
// drained in this process as a search worker drains it: pushes taken a second, a taken push's p50
// and p95, the attempts refused, and the tenant's oldest outbox row at the end.
// Goal: none older than 5 s (the engine keeps up with the fleet).
const WORKLOADS = Number(process.env.BENCH_AGENT_WORKLOADS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const FLEET_AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
const FLEET_SECONDS = Number(process.env.BENCH_AGENT_SECONDS ?? 60);
const TENANT = 'bench-agents';
const CLUSTER = 'bench-cluster';
const RATIO_GOAL = 1.5;
const LATENCY_GOAL_MS = 300;
const BACKLOG_GOAL_S = 5;

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

/** Registers `clusterId` as the tenant's admin (`adminToken`) and returns its agent token. */
async function registerCluster(base: string, adminToken: string, clusterId: string): Promise<string> {
  const registered = await fetch(`${base}/api/v1/k8s/agents/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cluster_id: clusterId, display_name: clusterId }),
  });
  if (registered.status !== 201) throw new Error(`registering ${clusterId} answered ${registered.status}`);
  return ((await registered.json()) as { token: string }).token;
}

/** Statuses that ask the agent to come back later (its Retry-After), as a busy API answers. */
const BACKPRESSURE = new Set([429, 503]);

/**
 * One push of the cluster's whole snapshot (`workloads`), as its agent: true when taken, false
 * when the API asked it to retry later (after which it has waited the Retry-After).
 */
function pusher(base: string, token: string, clusterId: string): () => Promise<boolean> {
  const body = JSON.stringify({ cluster_id: clusterId, workloads });
  return async () => {
    const res = await fetch(`${base}/api/v1/k8s/agents/push`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    if (BACKPRESSURE.has(res.status)) {
      await res.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
      return false;
    }
    if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    return true;
  };
}

/**
 * FLEET_AGENTS clusters pushing at once for FLEET_SECONDS, then the age of the tenant's oldest
 * outbox row (the drain runs in this process all along). The tenant's license is made unlimited
 * first, so every cluster registers.
 */
async function fleet(config: Config, base: string, adminToken: string, tenantId: string): Promise<void> {
  const key = mintDevLicenseKey(config, {
    edition: 'airgapped',
    type: 'selfhosted',
    clusters: 0,
    nodes: 0,
    licensee: 'bench',
    issued_at: new Date().toISOString(),
    expires_at: null,
  });
  const activated = await fetch(`${base}/api/v1/license/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ license_key: key }),
  });
  if (activated.status !== 200) throw new Error(`license activation answered ${activated.status}`);
  const clients = createWorkerClients(config, { poolMax: 2 });
  const drain = await startOutboxDrain(config, clients, pino({ level: 'silent' }));
  try {
    const pushes = await Promise.all(
      Array.from({ length: FLEET_AGENTS }, async (_, i) => {
        const clusterId = `bench-fleet-${i}`;
        return pusher(base, await registerCluster(base, adminToken, clusterId), clusterId);
      }),
    );
    const latencies: number[] = [];
    let refused = 0;
    const until = performance.now() + FLEET_SECONDS * 1000;
    await Promise.all(
      pushes.map(async (push) => {
        while (performance.now() < until) {
          const started = performance.now();
          if (await push()) latencies.push(performance.now() - started);
          else refused++;
        }
      }),
    );
    const [{ oldest }] = await clients
      .system('search_outbox')
      .where({ tenant_id: tenantId })
      .select(clients.system.raw('coalesce(extract(epoch from now() - min(created_at)), 0)::float as oldest'));
    latencies.sort((a, b) => a - b);
    console.log(
      `fleet: ${FLEET_AGENTS} agents pushing ${WORKLOADS} workloads each for ${FLEET_SECONDS} s: ` +
        `${(latencies.length / FLEET_SECONDS).toFixed(1)} pushes/s, p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(latencies, 95).toFixed(0)} ms; ${refused} attempts told to retry later (429/503)`,
    );
    console.log(
      `goal: the oldest outbox row at the end < ${BACKLOG_GOAL_S} s: ${Number(oldest).toFixed(1)} s ` +
        `${oldest < BACKLOG_GOAL_S ? 'met' : 'NOT MET'}`,
    );
  } finally {
    await drain.stop();
    await clients.close();
  }
}

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
    const token = await registerCluster(api.base, adminToken, CLUSTER);
    const attempt = pusher(api.base, token, CLUSTER);
    const push = async () => {
      if (!(await attempt())) throw new Error('one client alone was told to retry later');
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
    await fleet(config, api.base, adminToken, tenantId);
  } finally {
    await pg.end();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
