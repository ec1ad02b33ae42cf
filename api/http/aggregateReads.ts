import { LRUCache } from 'lru-cache';
import type { ResourceLimits } from '../../core/limitsConfig';
import { rateLimited } from '../../core/errors';
import { KeyedGate } from '../../core/keyedGate';

/** Tenants × aggregates kept at most; the least recently read go first. */
const MAX_CACHED = 10_000;
/** Seconds a tenant over its aggregate limit is asked to wait. */
const RETRY_AFTER_S = 1;

type Load = () => Promise<object>;

/** What a route served through AggregateReads may answer besides its success (OpenAPI). */
export const aggregateLimitedResponse = {
  429: { description: 'The tenant already runs its limit of statistics queries; retry after `Retry-After` seconds' },
} as const;

/**
 * The expensive aggregate reads (statistics over every entity or run of a tenant), bounded per
 * tenant: an answer is kept `cacheTtlMs` (a write shows up within that time, not at once);
 * concurrent identical reads share one query; and a tenant runs at most `concurrentPerTenant`
 * such queries at once in this process. A read past that waits up to `queueWaitMs` for a turn,
 * then is a 429 with Retry-After. Only the tenant's own reads queue: no other tenant waits.
 */
export class AggregateReads {
  private readonly gate: KeyedGate;
  private readonly cache: LRUCache<string, object, Load>;

  constructor(private readonly limits: ResourceLimits['aggregates']) {
    this.gate = new KeyedGate(limits.concurrentPerTenant);
    this.cache = new LRUCache<string, object, Load>({
      max: MAX_CACHED,
      ttl: limits.cacheTtlMs,
      fetchMethod: (_key, _stale, { context }) => context(),
    });
  }

  /**
   * The tenant's `aggregate`, cached or from `load` (which should hold its connection only
   * while it runs). `aggregate` names one query, so its answer always has the same type `V`.
   */
  async read<V extends object>(tenantId: string, aggregate: string, load: () => Promise<V>): Promise<V> {
    const value = await this.cache.fetch(`${tenantId}|${aggregate}`, { context: () => this.admitted(tenantId, load) });
    // fetch resolves undefined only when the load does, which a load typed `Promise<V>` cannot.
    return value as V;
  }

  private async admitted<V>(tenantId: string, load: () => Promise<V>): Promise<V> {
    const release = await this.gate.enter(tenantId, this.limits.queueWaitMs);
    if (!release) {
      throw rateLimited(
        `Too many statistics requests of this tenant at once (at most ${this.limits.concurrentPerTenant}); retry shortly`,
        RETRY_AFTER_S,
      );
    }
    try {
      return await load();
    } finally {
      release();
    }
  }
}
