import type { Knex } from 'knex';
import type { PolicyId } from './catalogue';

export interface StoredPolicy {
  policy_id: PolicyId;
  enabled: boolean;
  config: Record<string, unknown>;
  updated_at: Date;
}

/** The policies the caller's tenant changed (RLS picks its rows). */
export const storedPolicies = (trx: Knex): Promise<StoredPolicy[]> =>
  trx('tenant_policies').select('policy_id', 'enabled', 'config', 'updated_at');

export async function storePolicy(
  trx: Knex,
  tenantId: string,
  policy: { id: PolicyId; enabled: boolean; config: Record<string, unknown> },
): Promise<void> {
  await trx('tenant_policies')
    .insert({
      tenant_id: tenantId,
      policy_id: policy.id,
      enabled: policy.enabled,
      config: JSON.stringify(policy.config),
      updated_at: trx.fn.now(),
    })
    .onConflict(['tenant_id', 'policy_id'])
    .merge();
}
