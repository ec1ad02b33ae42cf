import { LRUCache } from 'lru-cache';
import type { ChangeListener } from '../../db/notifications';
import { cacheCounters, type CacheCounters } from '../metrics/registry';

export type Clock = () => number;

/** What a load saw when it started; `set` stores its value only if nothing was invalidated since. */
export interface CacheVersion {
  epoch: number;
  generation: number;
}

const sameVersion = (a: CacheVersion | undefined, b: CacheVersion) =>
  a?.epoch === b.epoch && a.generation === b.generation;

/** Values a cache keeps at most; the least recently used go first. */
const MAX_ENTRIES = 10_000;

/**
 * Values kept for a fixed time (lru-cache, which also bounds their number), made safe against
 * loads that race invalidations: every
 * invalidation bumps a version (the key's generation, or for `clear` and `evictWhere` the
 * global epoch), and a value whose load started before the bump is returned to its caller but
 * never stored. While `isLive` is false (invalidations could be missed, e.g. the change
 * listener is down) it serves and stores nothing, and a load that started then is never stored
 * either, since what it read may already be stale when the cache comes back.
 */
export class VersionedCache<V> {
  private readonly entries: LRUCache<string, { value: V }>;
  private readonly generations = new Map<string, number>();
  /** Loads under way, shared by concurrent misses of the same key. */
  private readonly loads = new Map<string, { version: CacheVersion | undefined; value: Promise<V | undefined> }>();
  private epoch = 0;
  private readonly counters: CacheCounters;

  /** `name` labels its hit and miss counters (shipyard_cache_hits_total{cache=name}). */
  constructor(
    ttlMs: number,
    now: Clock = Date.now,
    private readonly isLive: () => boolean = () => true,
    readonly name = 'unnamed',
  ) {
    this.entries = new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs, ttlResolution: 0, perf: { now } });
    this.counters = cacheCounters(name);
  }

  get(key: string): V | undefined {
    return this.isLive() ? this.entries.get(key)?.value : undefined;
  }

  /** Take before loading and pass to `set`; undefined while not live (nothing will be stored). */
  version(key: string): CacheVersion | undefined {
    return this.isLive() ? { epoch: this.epoch, generation: this.generations.get(key) ?? 0 } : undefined;
  }

  set(key: string, version: CacheVersion | undefined, value: V): void {
    const current = this.version(key);
    if (!current || !sameVersion(version, current)) return;
    this.entries.set(key, { value });
  }

  /** Drops one key, and keeps any load of it already under way from being stored. */
  invalidate(key: string): void {
    this.entries.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }

  /**
   * Drops every value matching `predicate`. A load under way cannot be matched before it ends,
   * so every load under way is kept from being stored (fine for rare events).
   */
  evictWhere(predicate: (value: V) => boolean): void {
    for (const [key, entry] of this.entries.entries()) if (predicate(entry.value)) this.entries.delete(key);
    this.epoch++;
  }

  /** Drops everything, including what loads under way would store, cached key or not. */
  clear(): void {
    this.entries.clear();
    this.epoch++;
  }

  /**
   * The cached value, or `load`'s; an undefined result (nothing found) is never cached.
   * Concurrent misses of one key share one load (the first uses of an API key run one bcrypt),
   * unless an invalidation came between: a caller after a revocation never gets a load that
   * started before it.
   */
  async getOrLoad<R extends V | undefined>(key: string, load: () => Promise<R>): Promise<V | R> {
    const cached = this.lookup(key);
    if (cached !== undefined) return cached;
    const version = this.version(key);
    const shared = this.loads.get(key);
    if (shared && version && sameVersion(shared.version, version)) return shared.value as Promise<R>;
    const value = load()
      .then((result) => {
        if (result !== undefined) this.set(key, version, result);
        return result;
      })
      .finally(() => {
        if (this.loads.get(key)?.value === value) this.loads.delete(key);
      });
    this.loads.set(key, { version, value });
    return value;
  }

  /**
   * For a load run inside a database transaction that may still roll back (it may write, as a
   * first sign-in does): the value is stored only once `committed` resolves, and concurrent
   * misses do not share a load, since each reads in its own transaction.
   */
  async getOrLoadCommitted(key: string, load: () => Promise<V>, committed: Promise<unknown>): Promise<V> {
    const cached = this.lookup(key);
    if (cached !== undefined) return cached;
    const version = this.version(key);
    const value = await load();
    committed.then(
      () => this.set(key, version, value),
      () => {
        // Rolled back: what the load read or wrote never happened.
      },
    );
    return value;
  }

  /**
   * `get`, counted as a hit when there is a value. A miss is left uncounted, for the load that
   * follows it (`getOrLoad`, `getOrLoadCommitted`) to count.
   */
  hit(key: string): V | undefined {
    const cached = this.get(key);
    if (cached !== undefined) this.counters.hit();
    return cached;
  }

  /** `get`, counted as a hit or a miss. */
  private lookup(key: string): V | undefined {
    const cached = this.hit(key);
    if (cached === undefined) this.counters.miss();
    return cached;
  }
}

/** The part of the process's change listener a cache needs. */
export type ChangeSource = Pick<ChangeListener, 'on' | 'onLost' | 'listening'>;

/**
 * A cache kept in step with every API process by Postgres notifications: `onChange` applies
 * each payload announced on `channel`; losing the listener clears it, and it stays inert until
 * the listener is back. Its metrics are labelled `name`, or else its channel.
 */
export function notifiedCache<V>(
  changes: ChangeSource,
  options: {
    ttlMs: number;
    now: Clock;
    channel: string;
    name?: string;
    onChange: (cache: VersionedCache<V>, payload: string) => void;
  },
): VersionedCache<V> {
  const cache = new VersionedCache<V>(
    options.ttlMs,
    options.now,
    () => changes.listening,
    options.name ?? options.channel,
  );
  // Caches are built before the listener starts, which then listens on every channel at once.
  void changes.on(options.channel, (payload) => options.onChange(cache, payload));
  changes.onLost(() => cache.clear());
  return cache;
}
