import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { buildApp } from '../../api/app';
import { loadConfig } from '../../core/config';
import { closeDeps, createDeps } from '../../api/deps';
import { defineRoute } from '../../api/http/route';
import { apiRoutes } from '../../api/routes';
import { benchCaller } from './benchCaller';
import { CONCURRENCY, get, measure, ONE_TENANT_LOAD, REQUESTS } from './load';

// `npm run bench:auth`: what authentication adds to a request. Three identical no-op routes
// differ only in access level; each is hit REQUESTS times by CONCURRENCY clients, and the
// script prints latency figures and the overhead over the unauthenticated route.

const noop = (path: string, access: 'public' | 'authenticated') =>
  defineRoute({
    method: 'GET',
    path,
    tag: 'Bench',
    access,
    summary: path,
    responses: { 200: { description: 'ok' } },
    handler: () => ({ ok: true }),
  });

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, ...ONE_TENANT_LOAD });
  const deps = await createDeps(config, pino({ level: 'silent' }));
  const routes = [noop('/bench/public', 'public'), noop('/bench/authenticated', 'authenticated'), ...apiRoutes];
  const server = createServer(buildApp(deps, routes).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = `${origin}/api/v1`;
  let revokeKey = async () => {};
  try {
    const caller = await benchCaller(config, origin);
    revokeKey = caller.revokeKey;

    const cases: [string, string, Record<string, string>][] = [
      ['unauthenticated', '/bench/public', {}],
      ['API key (cached)', '/bench/authenticated', caller.apiKey],
      ['session token (JWT)', '/bench/authenticated', caller.session],
    ];
    console.log(
      `auth overhead: ${REQUESTS} requests per case, ${CONCURRENCY} concurrent clients, keep-alive, one process`,
    );
    console.log('case                    median_ms  p95_ms  p99_ms    req/s');
    const medians: number[] = [];
    for (const [name, path, headers] of cases) {
      const result = await measure(() => get(`${base}${path}`, headers));
      medians.push(result.p50);
      console.log(
        `${name.padEnd(22)} ${result.p50.toFixed(2).padStart(10)} ${result.p95.toFixed(2).padStart(7)} ${result.p99.toFixed(2).padStart(7)} ${result.rps.toFixed(0).padStart(8)}`,
      );
    }
    console.log(
      `overhead over unauthenticated (median): API key +${(medians[1] - medians[0]).toFixed(2)} ms, session token +${(medians[2] - medians[0]).toFixed(2)} ms`,
    );
  } finally {
    // Revoked however the run ends, so runs never pile up keys against the bench user's limit of 25.
    await revokeKey();
    server.close();
    await closeDeps(deps);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
