import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { LicenseActivities } from '../activities/license';
import type {
  BetaGraceInput,
  BetaGraceOutcome,
  BetaGraceWorkflow,
  LicenseChangedSignal,
} from '../core/license/licenseWorkflows';

const { disconnectTenant } = proxyActivities<LicenseActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10 },
});

export const licenseChangedSignal = defineSignal('license-changed' satisfies LicenseChangedSignal);

/**
 * A tenant's Beta read-only window: a durable timer to its end (a month by default; Temporal
 * keeps it across restarts), ended early when the tenant's license changes. When it runs out,
 * the tenant is disconnected at once rather than at the next daily run; the activity checks the
 * license again, so a key activated meanwhile whose signal was lost still wins.
 */
export async function betaGrace(input: BetaGraceInput): Promise<BetaGraceOutcome> {
  let licenseChanged = false;
  setHandler(licenseChangedSignal, () => {
    licenseChanged = true;
  });
  // At least 1 ms: a timeout of 0 would be a patch marker in the history, not a timer.
  const remainingMs = Math.max(1, Date.parse(input.grace_ends_at) - Date.now());
  if (await condition(() => licenseChanged, remainingMs)) return { outcome: 'licensed' };
  const disconnection = await disconnectTenant({ tenant_id: input.tenant_id, grace_ms: input.grace_ms });
  return { outcome: 'disconnected', disconnection };
}

betaGrace satisfies BetaGraceWorkflow;
