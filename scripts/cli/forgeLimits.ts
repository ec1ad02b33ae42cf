import type { Config } from '../../core/config';
import { findTenantId } from '../../core/auth/store';
import {
  setTenantForgeLimits,
  tenantForgeLimits,
  type TenantForgeLimits,
  type TenantForgeLimitsOverride,
} from '../../core/forge/slotStore';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';

/**
 * Sets a tenant's forge limits (a null clears its override: the configured default applies
 * again) and answers the limits now in force. The tenant must exist.
 */
export async function setForgeLimits(
  config: Config,
  request: { tenant: string; override: TenantForgeLimitsOverride },
): Promise<{ tenantId: string; limits: TenantForgeLimits }> {
  const app = createPool(config.database.appUrl, 1);
  const system = createPool(config.database.systemUrl, 1);
  try {
    const tenantId = await findTenantId(system, request.tenant);
    if (!tenantId) throw new Error(`no tenant ${request.tenant}`);
    const limits = await withTenant(app, tenantId, async (trx) => {
      await setTenantForgeLimits(trx, tenantId, request.override);
      return tenantForgeLimits(trx, config.forge);
    });
    return { tenantId, limits };
  } finally {
    await Promise.all([app.destroy(), system.destroy()]);
  }
}
