import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { closeDeps, createDeps } from '../../api/deps';
import { loadConfig, type Config } from '../../core/config';
import { issueDevToken } from '../cli/devToken';
import { benchApiKey } from './benchCaller';
import { ENTITIES, ensureCatalog, TENANT } from './catalogTenant';
import {
  CONCURRENCY,
  get,
  measureSideBySide,
  REQUESTS,
  sideBySideTable,
  ONE_TENANT_LOAD,
  startApiProcess,
} from './load';

// `npm run bench:catalog`: GET /entities on a tenant of ENTITIES seeded entities (npm run seed),
// against its floor: the very statements the API sends for that page (captured from an
// in-process API), replayed through raw `pg` in the same tenant transaction. Three pages: the
// first, a filtered one, and one DEEP entities into the list by cursor. Each is measured twice:
// latency with one client (a request's own cost), throughput with CONCURRENCY clients (on two
// cores the API then takes CPU from PostgreSQL, which the floor's client barely does).
const DEEP = 5_000;

interface Statement {
  sql: string;
  bindings: unknown[];
}

/**
 * What the API sends to the database for `path`: its tenant BEGIN and the statements before
 * its COMMIT. The API runs in this process for the capture only.
 */
async function captureStatements(
  config: Config,
  path: string,
  authorization: string,
): Promise<{ begin: string; statements: Statement[] }> {
  const deps = await createDeps(config, pino({ level: 'silent' }));
  const server = createServer(buildApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sent: { sql: string; bindings?: unknown[] }[] = [];
  const record = (query: (typeof sent)[number]) => sent.push(query);
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    await get(url, { authorization }); // warms the key cache: the recorded request is a cached one
    deps.db.on('query', record);
    await get(url, { authorization });
  } finally {
    deps.db.off('query', record);
    server.close();
    await closeDeps(deps);
  }
  // The one request's transaction: BEGIN with the tenant setting, its statements, COMMIT.
  const entityQuery = sent.findIndex((q) => /from "entities"/.test(q.sql));
  if (entityQuery < 0) throw new Error(`${path} sent no query on entities`);
  const start = sent.findLastIndex((q, i) => i < entityQuery && q.sql.startsWith('begin; set local app.tenant_id'));
  const end = sent.findIndex((q, i) => i > entityQuery && q.sql === 'COMMIT;');
  if (start < 0 || end < 0) {
    throw new Error(`unexpected transaction shape: ${sent.map((q) => q.sql).join(' | ')}`);
  }
  // knex reports each statement as it sent it: placeholders already numbered ($1, …).
  return {
    begin: sent[start].sql,
    statements: sent.slice(start + 1, end).map((q) => ({ sql: q.sql, bindings: q.bindings ?? [] })),
  };
}

const table = sideBySideTable('case', 22);

async function main(): Promise<void> {
  const config = loadConfig();
  await ensureCatalog(config);
  const { token } = await issueDevToken(config, { tenant: TENANT, email: 'bench@bench.test', roles: ['admin'] });
  const api = await startApiProcess(undefined, ONE_TENANT_LOAD);
  const pg = new Pool({ connectionString: config.database.appUrl, max: CONCURRENCY });
  let revokeKey = async () => {};
  try {
    const apiKey = await benchApiKey(api.base, token, ['catalog:read'], 'bench-catalog');
    revokeKey = apiKey.revoke;
    const authorization = `Bearer ${apiKey.token}`;

    // The deep page's cursor: DEEP entities in, by following next cursors.
    let cursor = '';
    for (let seen = 0; seen < DEEP; seen += 100) {
      const page = (await (
        await fetch(`${api.base}/api/v1/entities?limit=100&fields=name${cursor && `&cursor=${cursor}`}`, {
          headers: { authorization },
        })
      ).json()) as { page: { nextCursor: string } };
      cursor = encodeURIComponent(page.page.nextCursor);
    }
    const cases: [string, string][] = [
      ['first page', '/api/v1/entities?limit=20'],
      ['filtered page', '/api/v1/entities?limit=20&type=service&lifecycle=production&tier=tier2'],
      [`page ${DEEP / 20 + 1} (by cursor)`, `/api/v1/entities?limit=20&cursor=${cursor}`],
    ];

    console.log(
      `bench:catalog — GET /entities on ${ENTITIES} entities (tenant ${TENANT}), cached API key, the API in its own ` +
        `process; floor: the same statements through raw pg in the same tenant transaction. Latency: one client, ` +
        `${REQUESTS / 4} requests; throughput: ${CONCURRENCY} keep-alive clients, ${REQUESTS} requests`,
    );
    console.log(table.header);
    for (const [name, path] of cases) {
      const { begin, statements } = await captureStatements(config, path, authorization);
      const floorOnce = async () => {
        const client = await pg.connect();
        try {
          await client.query(begin);
          for (const statement of statements) await client.query(statement.sql, statement.bindings);
          await client.query('commit');
        } finally {
          client.release();
        }
      };
      const oursOnce = () => get(`${api.base}${path}`, { authorization });
      const [ours, floor] = await measureSideBySide([oursOnce, floorOnce], { requests: REQUESTS / 4, concurrency: 1 });
      const [oursLoaded, floorLoaded] = await measureSideBySide([oursOnce, floorOnce]);
      console.log(table.row(name, ours, floor, oursLoaded, floorLoaded));
    }
  } finally {
    await revokeKey();
    await pg.end();
    api.proc.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
