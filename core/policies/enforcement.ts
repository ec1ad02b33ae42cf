import type { Knex } from 'knex';
import { SERVICE_ID_PATTERN } from '../catalog/types';
import type { TenantPolicies } from './reader';
import { apiKeyLifetimeRefusal, approvalGatesFirstStep, hasOwner, refusedByPolicy, stringsIn } from './rules';

// The checks of the enforced policies, called by the one command each governs. Each does nothing
// while its policy is disabled for the tenant.

const SERVICE_ID = new RegExp(SERVICE_ID_PATTERN);

/** api_key_max_lifetime, at API key creation. */
export function enforceApiKeyLifetime(policies: TenantPolicies, expiresAt: string | undefined, now = new Date()): void {
  const policy = policies.get('api_key_max_lifetime');
  if (!policy?.enabled) return;
  const refusal = apiKeyLifetimeRefusal(expiresAt, policy.config.max_days as number, now);
  if (refusal) throw refusedByPolicy('api_key_max_lifetime', refusal, 'expires_at');
}

/** entity_requires_owner, on the owner an entity has once an API write is applied. */
export function enforceEntityOwner(policies: TenantPolicies, owner: string | null | undefined): void {
  if (!policies.get('entity_requires_owner')?.enabled || hasOwner(owner)) return;
  throw refusedByPolicy('entity_requires_owner', 'An entity must have an owner', 'owner');
}

/**
 * production_molds_need_approval, at a run's start: when no approval gates its first step (one
 * the starter may give themselves does not), none
 * of the strings it carries (parameters, action configs) may be the service_id of a production
 * entity of the tenant (one indexed lookup of them all).
 */
export async function enforceProductionApproval(
  trx: Knex,
  policies: TenantPolicies,
  run: {
    steps: { type: string; requiresApproval: boolean; selfApproval?: boolean; config: unknown }[];
    parameters: unknown;
  },
): Promise<void> {
  if (!policies.get('production_molds_need_approval')?.enabled || approvalGatesFirstStep(run.steps)) return;
  // Only strings shaped like a service id can name one; sent as one array, not a bind per string.
  const candidates = stringsIn([run.parameters, ...run.steps.map((step) => step.config)]).filter((value) =>
    SERVICE_ID.test(value),
  );
  if (!candidates.length) return;
  const production = await trx('entities')
    .where({ lifecycle: 'production' })
    .whereRaw('service_id = any(?)', [candidates])
    .orderBy('service_id')
    .limit(5)
    .pluck('service_id');
  if (!production.length) return;
  throw refusedByPolicy(
    'production_molds_need_approval',
    `This run targets production entities (${production.join(', ')}) and its mold has no approval before its first step`,
    'mold_slug',
  );
}
