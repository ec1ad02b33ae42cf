import { createApiKeyCache, type CachedApiKey } from '../../api/auth/apiKeyCache';
import { API_KEY_REVOKED_CHANNEL } from '../../core/apiKeys/store';
import { VersionedCache, type ChangeSource } from '../../api/http/versionedCache';
import {
  createSessionPrincipalCache,
  sessionPrincipalKey,
  type CachedUserPrincipal,
} from '../../api/auth/sessionPrincipalCache';
import { createTeamsCache, TEAMS_CHANGED_CHANNEL } from '../../api/teams/cache';
import { ACCESS_CHANGED_CHANNEL } from '../../core/auth/store';
import type { SessionClaims } from '../../core/auth/sessionTokens';

// The cache behind GET /teams and API-key validation: lifetime, per-key invalidation, and the
// guards that keep a value loaded before an invalidation (or a listener loss) from being stored.

// A clock that starts well after 0 (lru-cache takes a start time of 0 for none).
const START = 1_000_000;
let now = START;
let live = true;
const cache = () =>
  new VersionedCache<string[]>(
    1000,
    () => now,
    () => live,
  );

beforeEach(() => {
  now = START;
  live = true;
});

/** A load the test finishes by hand, to interleave events with it. */
function deferredLoad<T>() {
  let finish: (value: T) => void = () => undefined;
  const load = () => new Promise<T>((resolve) => (finish = resolve));
  return { load, finish: (value: T) => finish(value) };
}

/** The change listener as far as a cache sees it: notifications and losses on demand. */
function fakeChanges() {
  const handlers = new Map<string, (payload: string) => void>();
  const lost: (() => void)[] = [];
  const changes: ChangeSource & { notify(channel: string, payload: string): void; lose(): void } = {
    listening: true,
    on: async (channel, handler) => void handlers.set(channel, handler),
    onLost: (handler) => void lost.push(handler),
    notify: (channel, payload) => handlers.get(channel)?.(payload),
    lose() {
      changes.listening = false;
      for (const handler of lost) handler();
    },
  };
  return changes;
}

describe('VersionedCache', () => {
  test('a value lives for the TTL, then is loaded again', async () => {
    const teams = cache();
    const load = jest.fn(async () => ['a']);
    await teams.getOrLoad('t1', load);
    now = START + 999;
    await teams.getOrLoad('t1', load);
    expect(load).toHaveBeenCalledTimes(1);
    now = START + 1001; // lru-cache: stale once older than the TTL
    await teams.getOrLoad('t1', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  test("invalidating one key leaves another's value", async () => {
    const teams = cache();
    await teams.getOrLoad('t1', async () => ['a']);
    await teams.getOrLoad('t2', async () => ['b']);
    teams.invalidate('t1');
    expect(teams.get('t1')).toBeUndefined();
    expect(teams.get('t2')).toEqual(['b']);
  });

  test('a load that started before its key was invalidated is returned to its caller but not cached', async () => {
    const teams = cache();
    const { load, finish } = deferredLoad<string[]>();
    const pending = teams.getOrLoad('t1', load);
    teams.invalidate('t1');
    finish(['stale']);
    expect(await pending).toEqual(['stale']);
    expect(teams.get('t1')).toBeUndefined();
  });

  test('concurrent misses of one key share one load (one bcrypt for the first uses of an API key)', async () => {
    const teams = cache();
    const load = jest.fn(async () => ['once']);
    const results = await Promise.all([
      teams.getOrLoad('t1', load),
      teams.getOrLoad('t1', load),
      teams.getOrLoad('t1', load),
    ]);
    expect(results).toEqual([['once'], ['once'], ['once']]);
    expect(load).toHaveBeenCalledTimes(1);
    // Different keys never share.
    await Promise.all([teams.getOrLoad('t2', load), teams.getOrLoad('t3', load)]);
    expect(load).toHaveBeenCalledTimes(3);
  });

  test('a miss after an invalidation does not join a load that started before it: it loads afresh', async () => {
    const teams = cache();
    const before = deferredLoad<string[]>();
    const stale = teams.getOrLoad('t1', before.load);
    teams.invalidate('t1'); // e.g. the key was revoked while its first validation ran
    const fresh = teams.getOrLoad('t1', async () => ['fresh']);
    before.finish(['stale']);
    expect(await stale).toEqual(['stale']);
    expect(await fresh).toEqual(['fresh']);
    expect(teams.get('t1')).toEqual(['fresh']);
  });

  test('a failed shared load fails every caller that joined it, and the next miss loads again', async () => {
    const teams = cache();
    let calls = 0;
    const failing = async (): Promise<string[]> => {
      calls++;
      throw new Error('database down');
    };
    await expect(Promise.all([teams.getOrLoad('t1', failing), teams.getOrLoad('t1', failing)])).rejects.toThrow(
      'database down',
    );
    expect(calls).toBe(1);
    expect(await teams.getOrLoad('t1', async () => ['back'])).toEqual(['back']);
  });

  test('a load of a key that had no entry, started before clear(), is returned but not cached', async () => {
    const teams = cache();
    const { load, finish } = deferredLoad<string[]>();
    const pending = teams.getOrLoad('uncached', load);
    teams.clear();
    finish(['stale']);
    expect(await pending).toEqual(['stale']);
    expect(teams.get('uncached')).toBeUndefined();
  });

  test('evictWhere drops the matching values only, and keeps every load under way from being cached', async () => {
    const teams = cache();
    await teams.getOrLoad('keep', async () => ['keep']);
    await teams.getOrLoad('drop', async () => ['drop']);
    const { load, finish } = deferredLoad<string[]>();
    const pending = teams.getOrLoad('loading', load);
    teams.evictWhere((value) => value[0] === 'drop');
    finish(['loaded']);
    expect(await pending).toEqual(['loaded']);
    expect(teams.get('loading')).toBeUndefined();
    expect(teams.get('drop')).toBeUndefined();
    expect(teams.get('keep')).toEqual(['keep']);
  });

  test('while not live it serves nothing, and a load started then is not cached after it is live again', async () => {
    const teams = cache();
    await teams.getOrLoad('t1', async () => ['a']);
    live = false;
    expect(teams.get('t1')).toBeUndefined();
    const { load, finish } = deferredLoad<string[]>();
    const pending = teams.getOrLoad('t2', load);
    live = true;
    finish(['read while invalidations could be missed']);
    await pending;
    expect(teams.get('t2')).toBeUndefined();
  });

  test('an undefined load result (nothing found) is not cached', async () => {
    const teams = cache();
    const load = jest.fn(async (): Promise<string[] | undefined> => undefined);
    expect(await teams.getOrLoad('t1', load)).toBeUndefined();
    await teams.getOrLoad('t1', load);
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('the API-key cache', () => {
  const key: CachedApiKey = { keyId: 'k1', tenantId: 't', userId: 'u', scopes: ['catalog:read'], expiresAt: null };

  test('a revocation announced during the validation (bcrypt) keeps the key from being cached', async () => {
    const changes = fakeChanges();
    const keys = createApiKeyCache(changes, () => now);
    const { load, finish } = deferredLoad<CachedApiKey | undefined>();
    const pending = keys.getOrLoad('digest', load);
    changes.notify(API_KEY_REVOKED_CHANNEL, 'k1');
    finish(key);
    expect(await pending).toEqual(key);
    expect(keys.get('digest')).toBeUndefined();
  });

  test('a revocation evicts the cached validations of that key and no other', async () => {
    const changes = fakeChanges();
    const keys = createApiKeyCache(changes, () => now);
    await keys.getOrLoad('d1', async () => key);
    await keys.getOrLoad('d2', async () => ({ ...key, keyId: 'k2' }));
    changes.notify(API_KEY_REVOKED_CHANNEL, 'k1');
    expect(keys.get('d1')).toBeUndefined();
    expect(keys.get('d2')?.keyId).toBe('k2');
  });

  test('a listener lost and back during the validation keeps the key from being cached', async () => {
    const changes = fakeChanges();
    const keys = createApiKeyCache(changes, () => now);
    const { load, finish } = deferredLoad<CachedApiKey | undefined>();
    const pending = keys.getOrLoad('digest', load);
    changes.lose();
    changes.listening = true; // reconnected before the validation ends
    finish(key);
    await pending;
    expect(keys.get('digest')).toBeUndefined();
  });
});

test('the teams cache: a team write announced during a load keeps that list from being cached; a lost listener drops every list', async () => {
  const changes = fakeChanges();
  const teams = createTeamsCache(changes, () => now);
  const { load, finish } = deferredLoad<never[]>();
  const pending = teams.getOrLoad('tenant-a', load);
  changes.notify(TEAMS_CHANGED_CHANNEL, 'tenant-a');
  finish([]);
  await pending;
  expect(teams.get('tenant-a')).toBeUndefined();
  await teams.getOrLoad('tenant-b', async () => []);
  changes.lose();
  changes.listening = true;
  expect(teams.get('tenant-b')).toBeUndefined();
});

describe('loads inside a transaction (getOrLoadCommitted)', () => {
  /** A transaction's outcome, settled by the test. */
  function transaction() {
    let commit: () => void = () => undefined;
    let rollBack: () => void = () => undefined;
    const committed = new Promise<void>((resolve, reject) => {
      commit = resolve;
      rollBack = () => reject(new Error('rolled back'));
    });
    return { committed, commit, rollBack };
  }
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  test('the value is stored only once its transaction commits', async () => {
    const values = cache();
    const trx = transaction();
    expect(await values.getOrLoadCommitted('k', async () => ['v'], trx.committed)).toEqual(['v']);
    expect(values.get('k')).toBeUndefined();
    trx.commit();
    await settled();
    expect(values.get('k')).toEqual(['v']);
  });

  test('a rolled-back load is returned to its caller and never stored', async () => {
    const values = cache();
    const trx = transaction();
    expect(await values.getOrLoadCommitted('k', async () => ['ghost'], trx.committed)).toEqual(['ghost']);
    trx.rollBack();
    await settled();
    expect(values.get('k')).toBeUndefined();
  });

  test('an invalidation between the load and the commit keeps the value from being stored', async () => {
    const values = cache();
    const trx = transaction();
    await values.getOrLoadCommitted('k', async () => ['stale'], trx.committed);
    values.invalidate('k');
    trx.commit();
    await settled();
    expect(values.get('k')).toBeUndefined();
  });

  test('concurrent misses each run their own load (each in its own transaction)', async () => {
    const values = cache();
    const load = jest.fn(async () => ['v']);
    await Promise.all([
      values.getOrLoadCommitted('k', load, transaction().committed),
      values.getOrLoadCommitted('k', load, transaction().committed),
    ]);
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('the session principal cache', () => {
  const claims: SessionClaims = {
    subject: 'sub-1',
    email: 'a@example.test',
    emailVerified: true,
    name: 'A',
    tenantId: 'tenant-a',
    groups: ['ops', 'dev'],
    expiresAt: new Date(0),
  };
  const principal = (tenantId: string): CachedUserPrincipal => ({
    kind: 'user',
    tenantId,
    userId: `user-of-${tenantId}`,
    email: 'a@example.test',
    name: 'A',
    groups: [],
    roles: [],
    permissions: new Set(),
    operator: false,
  });

  test('a renewed token with the same claims has the same key; a changed email, name or group list does not', () => {
    const key = sessionPrincipalKey(claims);
    expect(sessionPrincipalKey({ ...claims, expiresAt: new Date(1), groups: ['dev', 'ops'] })).toBe(key);
    expect(sessionPrincipalKey({ ...claims, email: 'b@example.test' })).not.toBe(key);
    expect(sessionPrincipalKey({ ...claims, name: 'B' })).not.toBe(key);
    expect(sessionPrincipalKey({ ...claims, groups: ['ops'] })).not.toBe(key);
    expect(sessionPrincipalKey({ ...claims, tenantId: 'tenant-b' })).not.toBe(key);
  });

  test("an access change in a tenant drops that tenant's principals and no other's", async () => {
    const changes = fakeChanges();
    const principals = createSessionPrincipalCache(changes, () => now);
    await principals.getOrLoadCommitted('a', async () => principal('tenant-a'), Promise.resolve());
    await principals.getOrLoadCommitted('b', async () => principal('tenant-b'), Promise.resolve());
    await new Promise((resolve) => setImmediate(resolve));
    changes.notify(ACCESS_CHANGED_CHANNEL, 'tenant-a');
    expect(principals.get('a')).toBeUndefined();
    expect(principals.get('b')?.userId).toBe('user-of-tenant-b');
  });
});
