import { TenantCache } from '../../api/teams/cache';

// The per-tenant cache behind GET /teams: lifetime, per-tenant invalidation, and the guard
// that keeps a value loaded before an invalidation from being stored after it.

let now = 0;
const cache = () => new TenantCache<string[]>(1000, () => now);

beforeEach(() => {
  now = 0;
});

test('a value lives for the TTL, then is loaded again', async () => {
  const teams = cache();
  const load = jest.fn(async () => ['a']);
  await teams.getOrLoad('t1', load);
  now = 999;
  await teams.getOrLoad('t1', load);
  expect(load).toHaveBeenCalledTimes(1);
  now = 1000;
  await teams.getOrLoad('t1', load);
  expect(load).toHaveBeenCalledTimes(2);
});

test("invalidating one tenant leaves another's value", async () => {
  const teams = cache();
  await teams.getOrLoad('t1', async () => ['a']);
  await teams.getOrLoad('t2', async () => ['b']);
  teams.invalidate('t1');
  expect(teams.get('t1')).toBeUndefined();
  expect(teams.get('t2')).toEqual(['b']);
});

test('a load that started before an invalidation is returned to its caller but not cached', async () => {
  const teams = cache();
  let finishLoad: (value: string[]) => void = () => undefined;
  const pending = teams.getOrLoad('t1', () => new Promise((resolve) => (finishLoad = resolve)));
  teams.invalidate('t1'); // a team write lands while the old list is being read
  finishLoad(['stale']);
  expect(await pending).toEqual(['stale']);
  expect(teams.get('t1')).toBeUndefined();
});
