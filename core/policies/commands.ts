import type { Knex } from 'knex';
import { recordAudit } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { invalid, notFound } from '../errors';
import { checkPolicyConfig, findPolicy, POLICIES, type PolicyDefinition } from './catalogue';
import { readTenantPolicies, type PolicyState } from './reader';
import { storePolicy } from './store';

export type PolicyView = PolicyDefinition & PolicyState;

/** The catalogue with the tenant's state of each policy. */
export async function listPolicies(trx: Knex): Promise<PolicyView[]> {
  const states = await readTenantPolicies(trx);
  return POLICIES.map((policy) => ({ ...policy, ...(states.get(policy.id) as PolicyState) }));
}

/**
 * Changes the tenant's `enabled` and/or `config` of a policy (what is left out stays), the
 * config checked against the policy's own schema; audited with the old and new state (policy
 * configs hold limits, never secrets). 404 for an id not in the catalogue. The caller drops its
 * cached policies of the tenant once this commits.
 */
export async function updatePolicy(
  trx: Knex,
  auth: CallerPrincipal,
  id: string,
  change: { enabled?: boolean; config?: Record<string, unknown> },
): Promise<PolicyView> {
  const policy = findPolicy(id);
  if (!policy) throw notFound('Policy');
  const current = (await readTenantPolicies(trx)).get(policy.id) as PolicyState;
  const { config, problems } = checkPolicyConfig(policy.id, change.config ?? current.config);
  if (problems.length) throw invalid(`config does not match the schema of policy ${policy.id}`, problems);
  const enabled = change.enabled ?? current.enabled;
  await storePolicy(trx, auth.tenantId, { id: policy.id, enabled, config });
  await recordAudit(trx, auth, {
    eventType: 'policy.updated',
    action: 'update',
    targetType: 'policy',
    targetId: policy.id,
    metadata: { before: { enabled: current.enabled, config: current.config }, after: { enabled, config } },
  });
  return (await listPolicies(trx)).find((view) => view.id === policy.id) as PolicyView;
}
