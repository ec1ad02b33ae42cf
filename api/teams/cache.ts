import type { Knex } from 'knex';
import type { ChangeListener } from '../../db/notifications';
import type { AppDeps } from '../deps';
import type { TeamListItem } from './store';

export type Clock = () => number;

/** The spec's /teams cache lifetime. */
export const TEAMS_CACHE_TTL_MS = 3 * 60 * 1000;
/** Postgres channel on which a team write is announced, with the tenant id as payload. */
export const TEAMS_CHANGED_CHANNEL = 'shipyard_teams_changed';

/**
 * One value per tenant, kept for a fixed time. Every invalidation bumps the tenant's
 * generation, and a value loaded before an invalidation is never stored: a read that raced a
 * write cannot put the old list back. While `isLive` is false (invalidations could be missed)
 * it stores and serves nothing.
 */
export class TenantCache<T> {
  private readonly entries = new Map<string, { value: T; storedAt: number }>();
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: Clock = Date.now,
    private readonly isLive: () => boolean = () => true,
  ) {}

  get(tenantId: string): T | undefined {
    const entry = this.isLive() ? this.entries.get(tenantId) : undefined;
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
    if (generation !== this.generation(tenantId) || !this.isLive()) return;
    this.entries.set(tenantId, { value, storedAt: this.now() });
  }

  invalidate(tenantId: string): void {
    this.entries.delete(tenantId);
    this.generations.set(tenantId, this.generation(tenantId) + 1);
  }

  clear(): void {
    for (const tenantId of this.entries.keys()) this.invalidate(tenantId);
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

export type TeamsCache = TenantCache<TeamListItem[]>;

/** This process's /teams cache, dropped by a team write in any API process. */
export function createTeamsCache(changes: ChangeListener, now: Clock = Date.now): TeamsCache {
  const cache = new TenantCache<TeamListItem[]>(TEAMS_CACHE_TTL_MS, now, () => changes.listening);
  changes.on(TEAMS_CHANGED_CHANNEL, (tenantId) => cache.invalidate(tenantId));
  changes.onLost(() => cache.clear());
  return cache;
}

/**
 * Call on every team write. Drops the tenant's list here now (this request's own later reads)
 * and again once the transaction has ended, so a list read concurrently from pre-commit data
 * cannot outlive the commit; the notification, delivered at commit, drops it in every process.
 */
export async function dropTeamsCache(deps: AppDeps, trx: Knex.Transaction, tenantId: string): Promise<void> {
  const cache = deps.teamsCache;
  cache.invalidate(tenantId);
  trx.executionPromise
    ?.finally(() => cache.invalidate(tenantId))
    .catch(() => {
      // A rollback: the request's own error handling reports it.
    });
  await trx.raw('select pg_notify(?, ?)', [TEAMS_CHANGED_CHANNEL, tenantId]);
}
