import type { Knex } from 'knex';
import type { AppDeps } from '../deps';

export type Clock = () => number;

/** The spec's /teams cache lifetime. */
export const TEAMS_CACHE_TTL_MS = 3 * 60 * 1000;

/**
 * One value per tenant, kept for a fixed time. Every invalidation bumps the tenant's
 * generation, and a value loaded before an invalidation is never stored: a read that raced a
 * write cannot put the old list back.
 */
export class TenantCache<T> {
  private readonly entries = new Map<string, { value: T; storedAt: number }>();
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: Clock = Date.now,
  ) {}

  get(tenantId: string): T | undefined {
    const entry = this.entries.get(tenantId);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt >= this.ttlMs) {
      this.entries.delete(tenantId);
      return undefined;
    }
    return entry.value;
  }

  /** Take before loading; pass to `set`. */
  generation(tenantId: string): number {
    return this.generations.get(tenantId) ?? 0;
  }

  set(tenantId: string, generation: number, value: T): void {
    if (generation !== this.generation(tenantId)) return;
    this.entries.set(tenantId, { value, storedAt: this.now() });
  }

  invalidate(tenantId: string): void {
    this.entries.delete(tenantId);
    this.generations.set(tenantId, this.generation(tenantId) + 1);
  }

  async getOrLoad(tenantId: string, load: () => Promise<T>): Promise<T> {
    const cached = this.get(tenantId);
    if (cached !== undefined) return cached;
    const generation = this.generation(tenantId);
    const value = await load();
    this.set(tenantId, generation, value);
    return value;
  }
}

// One cache per app instance, without a field on the shared AppDeps: a test can run several
// apps in one process and each keeps its own cache.
const caches = new WeakMap<AppDeps, TenantCache<unknown>>();

export function teamsCacheFor<T>(deps: AppDeps): TenantCache<T> {
  let cache = caches.get(deps);
  if (!cache) {
    cache = new TenantCache<unknown>(TEAMS_CACHE_TTL_MS);
    caches.set(deps, cache);
  }
  return cache as TenantCache<T>;
}

/** Lets a test give an app a cache with its own clock. */
export function useTeamsCache(deps: AppDeps, cache: TenantCache<unknown>): void {
  caches.set(deps, cache);
}

/**
 * Call on every team write. Drops the tenant's list now (this request's own later reads) and
 * again once the transaction has ended, so a list read concurrently from pre-commit data
 * cannot outlive the commit.
 */
export function dropTeamsCache(deps: AppDeps, trx: Knex.Transaction, tenantId: string): void {
  const cache = teamsCacheFor(deps);
  cache.invalidate(tenantId);
  trx.executionPromise
    ?.finally(() => cache.invalidate(tenantId))
    .catch(() => {
      // A rollback: the request's own error handling reports it.
    });
}
