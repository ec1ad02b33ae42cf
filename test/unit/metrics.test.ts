import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { requestMetrics, UNMATCHED } from '../../api/metrics/requests';
import { httpRequests, processRegistry } from '../../api/metrics/registry';
import { VersionedCache } from '../../api/http/versionedCache';

async function counted(labels: Record<string, string>): Promise<number> {
  const { values } = await httpRequests.get();
  return (
    values.find((value) =>
      Object.entries(labels).every(([key, label]) => String((value.labels as Record<string, unknown>)[key]) === label),
    )?.value ?? 0
  );
}

async function cacheCount(kind: 'hits' | 'misses', cache: string): Promise<number> {
  const metric = processRegistry.getSingleMetric(`shipyard_cache_${kind}_total`);
  const { values } = await metric!.get();
  return values.find((value) => value.labels.cache === cache)?.value ?? 0;
}

test('requests are labelled by template, unknown paths and non-standard methods each share one label value', async () => {
  const router = new Router();
  router.get('/things/:id', (ctx) => {
    ctx.body = 'ok';
  });
  const app = new Koa();
  app.use(requestMetrics(new Map([['/things/:id', '/things/{id}']])));
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await (await fetch(`${url}/things/42`)).text();
    await (await fetch(`${url}/elsewhere/42`)).text();
    await (await fetch(`${url}/things/42`, { method: 'PURGE' })).text();
  } finally {
    server.close();
  }
  expect(await counted({ route: '/things/{id}', method: 'GET', status: '200' })).toBe(1);
  expect(await counted({ route: UNMATCHED, method: 'GET', status: '404' })).toBe(1);
  expect(await counted({ route: UNMATCHED, method: 'OTHER', status: '404' })).toBe(1);
  const { values } = await httpRequests.get();
  expect(values.some((value) => String(value.labels.route).includes('42'))).toBe(false);
});

test('a VersionedCache counts a hit for a cached value and a miss for a load, under its name', async () => {
  const cache = new VersionedCache<string>(60_000, Date.now, () => true, 'unit-cache');
  expect([await cacheCount('misses', 'unit-cache'), await cacheCount('hits', 'unit-cache')]).toEqual([0, 0]);
  await cache.getOrLoad('k', async () => 'v');
  await cache.getOrLoad('k', async () => 'v');
  await cache.getOrLoad('other', async () => undefined);
  expect([await cacheCount('misses', 'unit-cache'), await cacheCount('hits', 'unit-cache')]).toEqual([2, 1]);
});
