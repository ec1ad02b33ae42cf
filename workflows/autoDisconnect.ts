import { proxyActivities } from '@temporalio/workflow';
import type { LicenseActivities } from '../activities/license';
import type {
  AutoDisconnectInput,
  AutoDisconnectResult,
  AutoDisconnectWorkflow,
} from '../core/license/licenseWorkflows';

const { listTenantsPastBetaGrace, disconnectTenant } = proxyActivities<LicenseActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10 },
});

/**
 * The daily auto-disconnect (the `shipyard-auto-disconnect` schedule on the platform pool): for
 * every tenant past its Beta grace, one cluster stays connected and the others' agent tokens are
 * revoked. One tenant after the other, each in its own transaction; a tenant already done is a
 * no-op, so a retried or repeated run changes nothing more.
 */
export async function autoDisconnect(input: AutoDisconnectInput): Promise<AutoDisconnectResult> {
  const tenants = await listTenantsPastBetaGrace({ grace_ms: input.grace_ms });
  let revoked = 0;
  for (const tenant_id of tenants) {
    revoked += (await disconnectTenant({ tenant_id, grace_ms: input.grace_ms })).revoked.length;
  }
  return { tenants: tenants.length, revoked };
}

autoDisconnect satisfies AutoDisconnectWorkflow;
