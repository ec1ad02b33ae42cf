import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors';
import { isReadOnly } from './rules';
import type { LicenseRow } from './rules';

/** What decides whether a tenant is read-only: its license's edition and Beta end. */
export interface ReadOnlyFacts {
  edition: LicenseRow['edition'] | 'free';
  beta_ends_at: Date | null;
}

const TENANTS_MAX = 10_000;

export const betaEndedReadOnly = () =>
  new ApiError(
    'BETA_ENDED_READ_ONLY',
    'The Beta period has ended: this tenant is read-only until a paid license is activated (POST /license/activate)',
  );

/**
 * Which tenants are read-only (a Beta license past its end), as this process last read it, for
 * the router's guard on writes. The facts are kept `ttlMs`, not the answer, so a Beta end that
 * passes while cached takes effect at once. This process forgets a tenant when its license
 * changes here; another process's change reaches it within `ttlMs`. Reads never consult it.
 */
export class ReadOnlyTenants {
  private readonly facts: LRUCache<string, ReadOnlyFacts>;

  constructor(
    ttlMs: number,
    private readonly load: (tenantId: string) => Promise<ReadOnlyFacts>,
  ) {
    this.facts = new LRUCache({ max: TENANTS_MAX, ttl: ttlMs });
  }

  /** Throws BETA_ENDED_READ_ONLY when the tenant may not write now. */
  async assertWritable(tenantId: string, now = new Date()): Promise<void> {
    let facts = this.facts.get(tenantId);
    if (!facts) {
      facts = await this.load(tenantId);
      this.facts.set(tenantId, facts);
    }
    if (isReadOnly(facts.edition, facts.beta_ends_at, now)) throw betaEndedReadOnly();
  }

  /** The tenant's license changed in this process: the next write reads it again. */
  forget(tenantId: string): void {
    this.facts.delete(tenantId);
  }
}
