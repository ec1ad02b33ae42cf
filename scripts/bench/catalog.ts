import { Pool } from 'pg';
import { loadConfig } from '../../core/config';
import { benchApiKey } from './benchCaller';
import { capturedFloor } from './capturedStatements';
import { catalogAdmin, ENTITIES, TENANT } from './catalogTenant';
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

const table = sideBySideTable('case', 22);

async function main(): Promise<void> {
  const config = loadConfig();
  const { token } = await catalogAdmin(config);
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
      const floorOnce = await capturedFloor(config, pg, path, authorization);
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
