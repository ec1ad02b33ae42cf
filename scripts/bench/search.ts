import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { loadConfig, type Config } from '../../core/config';
import { BACKFILL_BATCH_SIZE, BACKFILL_WORKFLOW_ID } from '../../search/backfill';
import type { BackfillStatus } from '../../search/backfillControl';
import { createSearchEngine, type SearchEngine } from '../../search/client';
import { loadDocumentsAfter, type SearchDocument } from '../../search/documents';
import { INDEX_DEFINITIONS } from '../../search/indices';
import { TenantSearch, type SearchQuery } from '../../search/queries';
import { createWorkerClients } from '../../workers/clients';
import { startOutboxDrain } from '../../workers/notifiedLoops';
import { createPoolWorkers, installTemporalLogging } from '../../workers/pools';
import { issueDevToken } from '../cli/devToken';
import { benchApiKey } from './benchCaller';
import { ENTITIES, TENANT, ensureCatalog } from './catalogTenant';
import {
  CONCURRENCY,
  get,
  measureSideBySide,
  percentile,
  sideBySideTable,
  ONE_TENANT_LOAD,
  startApiProcess,
} from './load';

// `npm run bench:search`, in one run:
// 1. backfill throughput: POST /admin/backfill of every tenant's entities (the seeded 100k and
//    the rest), timed until its status reads completed, against the floor: the same documents,
//    read beforehand, sent raw with `_bulk` in batches of the same size to a scratch index that
//    already holds them (both overwrite), once the drain has emptied the outbox;
// 2. GET /search latency and throughput against the very request TenantSearch sends, posted
//    straight to the engine's `_search`;
// 3. indexing lag: entities created through the API one after another, each timed from its 201
//    until a search finds it (the drain's write and the engine's refresh, ~1 s, included).
// The API runs in its own process; the search worker (Temporal worker and outbox drain) in this one.

const LAG_ENTITIES = Number(process.env.BENCH_LAG_ENTITIES ?? 200);
/** A search of 100k entities costs the engine tens of milliseconds: fewer requests than bench:http. */
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 800);
const LAG_TENANT = 'bench-search';

const QUERIES: [string, Omit<SearchQuery, 'offset' | 'limit'>][] = [
  ['one word', { q: 'payments' }],
  ['two words, the last a prefix', { q: 'billing work' }],
  ['a word, filtered', { q: 'checkout', types: ['service'], lifecycle: 'production' }],
];

const queryString = (query: Omit<SearchQuery, 'offset' | 'limit'>) =>
  new URLSearchParams({
    q: query.q,
    ...(query.types && { types: query.types.join(',') }),
    ...(query.lifecycle && { lifecycle: query.lifecycle }),
  }).toString();

/** Every entity's document with its id, in id order, as the backfill reads them. */
async function everyEntityDocument(config: Config): Promise<{ id: string; document: SearchDocument }[]> {
  const clients = createWorkerClients(config, { poolMax: 1 });
  try {
    const documents: { id: string; document: SearchDocument }[] = [];
    for (let afterId: string | null = null; ;) {
      const batch = await loadDocumentsAfter(clients.system, 'entities', afterId, BACKFILL_BATCH_SIZE);
      documents.push(...batch);
      if (batch.length < BACKFILL_BATCH_SIZE) return documents;
      afterId = batch[batch.length - 1].id;
    }
  } finally {
    await clients.close();
  }
}

/**
 * The floor of the backfill: `documents` through raw `_bulk`, batch after batch, into an index
 * that already holds them (filled by an untimed pass first), as the backfill finds the live
 * index: overwriting a document costs the engine more than adding one. Documents per second.
 */
async function rawBulk(
  engine: SearchEngine,
  config: Config,
  documents: { id: string; document: SearchDocument }[],
): Promise<number> {
  const index = `${engine.indexPrefix}_bench_bulk_floor`;
  const url = config.elasticsearch.url;
  await fetch(`${url}/${index}`, { method: 'DELETE' });
  await fetch(`${url}/${index}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: INDEX_DEFINITIONS.entities.mappings,
    }),
  });
  const pass = async () => {
    for (let i = 0; i < documents.length; i += BACKFILL_BATCH_SIZE) {
      const lines = documents.slice(i, i + BACKFILL_BATCH_SIZE).flatMap(({ id, document }) => [
        // The rows' own ids, as the backfill writes: random UUIDs cost the engine more to look
        // up on overwrite than the sequential numbers this floor once used.
        JSON.stringify({ index: { _index: index, _id: id } }),
        JSON.stringify(document),
      ]);
      const res = await fetch(`${url}/_bulk`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: `${lines.join('\n')}\n`,
      });
      const body = (await res.json()) as { errors: boolean; items?: { index: { error?: unknown } }[] };
      if (!res.ok || body.errors) {
        const firstError = body.items?.find((item) => item.index.error)?.index.error;
        throw new Error(`the floor's _bulk failed (${res.status}): ${JSON.stringify(firstError ?? body)}`);
      }
    }
  };
  try {
    await pass();
    const started = performance.now();
    await pass();
    return documents.length / ((performance.now() - started) / 1000);
  } finally {
    await fetch(`${url}/${index}`, { method: 'DELETE' });
  }
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function main(): Promise<void> {
  installTemporalLogging(pino({ level: 'silent' }));
  const config = loadConfig();
  await ensureCatalog(config);
  const { token, tenantId } = await issueDevToken(config, {
    tenant: TENANT,
    email: 'bench@bench.test',
    roles: ['admin'],
  });
  const operator = (
    await issueDevToken(config, { tenant: config.platformTenant, email: 'bench@platform.test', roles: ['admin'] })
  ).token;
  const lagWriter = (await issueDevToken(config, { tenant: LAG_TENANT, email: 'bench@search.test', roles: ['admin'] }))
    .token;
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const clients = createWorkerClients(config);
  const workers = await createPoolWorkers(['search'], config, clients);
  const running = workers.run();
  const drain = await startOutboxDrain(config, clients, pino({ level: 'silent' }));
  const engine = createSearchEngine(config);
  const apiKey = await benchApiKey(api.base, token, ['catalog:read'], 'bench-search');
  const created: string[] = [];
  try {
    const call = (path: string, bearer: string, init: RequestInit = {}) =>
      fetch(`${api.base}/api/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      });

    // 1. Backfill, once the drain has indexed what the seed left in the outbox: both it and the
    // floor then overwrite documents the index holds, and no drain competes with either.
    while (Number((await clients.system('search_outbox').count({ n: '*' }))[0].n) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const documents = await everyEntityDocument(config);
    const floorRate = await rawBulk(engine, config, documents);
    const started = performance.now();
    const start = await call('/admin/backfill', operator, { method: 'POST', body: '{"collections":["entities"]}' });
    if (start.status !== 202) throw new Error(`backfill did not start: ${start.status} ${await start.text()}`);
    // Its end read from Temporal's own record of the workflow (its status, no payloads), every
    // 50 ms: polling GET /admin/backfill/status, which queries the workflow, put work on the
    // very worker being measured. The counts are read from that endpoint once it is done.
    const connection = await Connection.connect({ address: config.temporal.address });
    try {
      const running = async () => {
        // The latest run of the fixed id: the one just started.
        const { workflowExecutionInfo } = await connection.workflowService.describeWorkflowExecution({
          namespace: config.temporal.namespace,
          execution: { workflowId: BACKFILL_WORKFLOW_ID },
        });
        return (
          workflowExecutionInfo?.status ===
          temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
        );
      };
      while (await running()) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await connection.close();
    }
    const elapsedSeconds = (performance.now() - started) / 1000;
    const status = await json<BackfillStatus>(await call('/admin/backfill/status', operator));
    if (status.status !== 'completed') throw new Error(`backfill ${status.status}: ${status.error}`);
    const read = status.progress.entities?.read ?? 0;
    const oursRate = read / elapsedSeconds;
    console.log(
      `bench:search — tenant ${TENANT} (${ENTITIES} entities); the API in its own process, the search worker in this one`,
    );
    console.log(
      `backfill of every tenant's entities (${read} documents): ours ${oursRate.toFixed(0)} docs/s, ` +
        `raw _bulk ${floorRate.toFixed(0)} docs/s (${documents.length} documents, batches of ${BACKFILL_BATCH_SIZE}): ` +
        `${(oursRate / floorRate).toFixed(2)}×`,
    );

    // 2. /search against the same request sent straight to the engine.
    await engine.client.indices.refresh({ index: `${engine.indexPrefix}_*` });
    const tenantSearch = new TenantSearch(engine, tenantId);
    console.log(
      `GET /search (cached API key) against the same _search request posted to the engine. Latency: one client, ` +
        `${SEARCHES / 4} requests; throughput: ${CONCURRENCY} clients, ${SEARCHES} requests`,
    );
    const table = sideBySideTable('query', 30);
    console.log(table.header);
    for (const [name, query] of QUERIES) {
      const { index, body } = tenantSearch.searchRequest({ ...query, offset: 0, limit: 20 });
      const engineUrl = `${config.elasticsearch.url}/${index.join(',')}/_search?ignore_unavailable=true&allow_no_indices=true`;
      const payload = JSON.stringify(body);
      const floorOnce = async () => {
        const res = await fetch(engineUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: payload,
        });
        if (!res.ok) throw new Error(`the engine answered ${res.status}`);
        await res.arrayBuffer();
      };
      const path = `${api.base}/api/v1/search?${queryString(query)}`;
      const oursOnce = () => get(path, { authorization: `Bearer ${apiKey.token}` });
      const [ours, floor] = await measureSideBySide([oursOnce, floorOnce], { requests: SEARCHES / 4, concurrency: 1 });
      const [oursLoaded, floorLoaded] = await measureSideBySide([oursOnce, floorOnce], { requests: SEARCHES });
      console.log(table.row(name, ours, floor, oursLoaded, floorLoaded));
    }

    // 3. Indexing lag: from each 201 until a search finds the entity.
    const committedAt = new Map<string, number>();
    const lags: number[] = [];
    const watching = (async () => {
      while (lags.length < LAG_ENTITIES) {
        const pending = [...committedAt.keys()];
        if (pending.length) {
          const found = await engine.client.search({
            index: `${engine.indexPrefix}_entities`,
            query: { ids: { values: pending } },
            _source: false,
            size: pending.length,
          });
          const now = performance.now();
          for (const hit of found.hits.hits) {
            lags.push(now - committedAt.get(hit._id!)!);
            committedAt.delete(hit._id!);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    for (let i = 0; i < LAG_ENTITIES; i++) {
      const res = await call('/entities', lagWriter, {
        method: 'POST',
        body: JSON.stringify({ name: `lag probe ${Date.now()}-${i}`, type: 'service' }),
      });
      const entity = await json<{ id: string }>(res);
      committedAt.set(entity.id, performance.now());
      created.push(entity.id);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await watching;
    lags.sort((a, b) => a - b);
    console.log(
      `indexing lag, ${LAG_ENTITIES} entities created one after another (201 → found by a search): ` +
        `p50 ${percentile(lags, 50).toFixed(0)} ms, p95 ${percentile(lags, 95).toFixed(0)} ms, ` +
        `max ${lags[lags.length - 1].toFixed(0)} ms (goal: p95 under 2,000 ms)`,
    );
  } finally {
    // Settled, not awaited one by one: a cleanup that fails (the API gone) must not hide the error.
    await Promise.allSettled([
      ...created.map((id) =>
        fetch(`${api.base}/api/v1/entities/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${lagWriter}` },
        }),
      ),
      apiKey.revoke(),
    ]);
    await drain.stop();
    workers.shutdown();
    await running;
    await clients.close();
    await engine.client.close();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
