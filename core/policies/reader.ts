import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { defaultPolicyConfig, POLICIES, type PolicyId } from './catalogue';
import { storedPolicies } from './store';

export interface PolicyState {
  enabled: boolean;
  config: Record<string, unknown>;
  /** When the tenant last changed it; null while the defaults apply. */
  updated_at: Date | null;
}

/** Every policy of a tenant: its stored state, else the catalogue's defaults. */
export type TenantPolicies = ReadonlyMap<PolicyId, PolicyState>;

const TENANTS_MAX = 10_000;

/**
 * Each tenant's policies as this process last read them, for the writes they govern (an entity,
 * an API key, a run start) which would otherwise each read them again. A PUT in this process
 * forgets the tenant at once; another process's PUT reaches this one within `ttlMs`.
 */
export class PolicyReader {
  private readonly tenants: LRUCache<string, TenantPolicies>;

  constructor(ttlMs: number) {
    this.tenants = new LRUCache({ max: TENANTS_MAX, ttl: ttlMs });
  }

  /** In the tenant's transaction (RLS picks its rows). */
  async read(trx: Knex, tenantId: string): Promise<TenantPolicies> {
    const cached = this.tenants.get(tenantId);
    if (cached) return cached;
    const policies = await readTenantPolicies(trx);
    this.tenants.set(tenantId, policies);
    return policies;
  }

  forget(tenantId: string): void {
    this.tenants.delete(tenantId);
  }
}

/** Uncached: what GET /admin/policies shows. */
export async function readTenantPolicies(trx: Knex): Promise<TenantPolicies> {
  const stored = new Map((await storedPolicies(trx)).map((row) => [row.policy_id, row]));
  return new Map(
    POLICIES.map((policy) => {
      const row = stored.get(policy.id);
      const state: PolicyState = row
        ? {
            enabled: row.enabled,
            config: { ...defaultPolicyConfig(policy.id), ...row.config },
            updated_at: row.updated_at,
          }
        : { enabled: policy.default_enabled, config: defaultPolicyConfig(policy.id), updated_at: null };
      return [policy.id, state];
    }),
  );
}
