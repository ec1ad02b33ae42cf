import type { Knex } from 'knex';
import { disconnectTenantPastGrace } from '../core/license/commands';
import type { DisconnectTenantInput } from '../core/license/licenseWorkflows';
import { tenantsPastBetaGrace } from '../core/license/store';

export function createLicenseActivities(deps: { db: Knex; system: Knex }) {
  return {
    /** Tenants whose Beta grace is over (the system role reads every tenant's license). */
    async listTenantsPastBetaGrace(input: { grace_ms: number }): Promise<string[]> {
      return tenantsPastBetaGrace(deps.system, input.grace_ms);
    },
    /**
     * Keeps one of the tenant's clusters and revokes the others' agent tokens, if its grace is
     * still over. Idempotent: a retry finds the others already revoked.
     */
    async disconnectTenant({ tenant_id, grace_ms }: DisconnectTenantInput) {
      return disconnectTenantPastGrace(deps.db, tenant_id, grace_ms);
    },
  };
}

export type LicenseActivities = ReturnType<typeof createLicenseActivities>;
