import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { recordAudit, type AuditEvent } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import { conflict, notFound } from '../errors';
import { evaluateFlag } from './rules';
import {
  deleteFlag,
  deleteOverride,
  insertFlag,
  tenantExists,
  tenantFlagStates,
  updateFlag,
  upsertOverride,
  type FeatureFlag,
  type FlagOverride,
} from './store';

// A platform operator's changes to feature flags. Each is written by the system role (the only
// one allowed to), then audited in the operator's own tenant: the app role cannot write the
// flags and the system role cannot write audit entries, so they are two transactions, the
// entry written once the change has committed.

export interface FeatureDeps {
  /** The app role: the audit entry. */
  db: Knex;
  /** The system role: the flags. */
  system: Knex;
}

const audited = (
  deps: FeatureDeps,
  auth: CallerPrincipal,
  key: string,
  event: Omit<AuditEvent, 'targetType' | 'targetId'>,
) =>
  withTenant(deps.db, auth.tenantId, (trx) =>
    recordAudit(trx, auth, { ...event, targetType: 'feature_flag', targetId: key }),
  );

export async function createFlag(
  deps: FeatureDeps,
  auth: CallerPrincipal,
  flag: { key: string; name: string; description: string; enabled: boolean },
): Promise<FeatureFlag & { overrides: FlagOverride[] }> {
  const created = await insertFlag(deps.system, flag);
  if (!created) throw conflict(`A feature flag with key "${flag.key}" already exists`);
  await audited(deps, auth, flag.key, {
    eventType: 'feature_flag.created',
    action: 'create',
    metadata: { enabled: flag.enabled },
  });
  return { ...created, overrides: [] };
}

export async function changeFlag(
  deps: FeatureDeps,
  auth: CallerPrincipal,
  key: string,
  changes: { name?: string; description?: string; enabled?: boolean },
): Promise<FeatureFlag> {
  const flag = await updateFlag(deps.system, key, changes);
  if (!flag) throw notFound('Feature flag');
  await audited(deps, auth, key, { eventType: 'feature_flag.updated', action: 'update', metadata: { ...changes } });
  return flag;
}

export async function removeFlag(deps: FeatureDeps, auth: CallerPrincipal, key: string): Promise<void> {
  if (!(await deleteFlag(deps.system, key))) throw notFound('Feature flag');
  await audited(deps, auth, key, { eventType: 'feature_flag.deleted', action: 'delete' });
}

/** Sets `tenantId`'s override of the flag; 404 for an unknown flag or tenant. */
export async function setOverride(
  deps: FeatureDeps,
  auth: CallerPrincipal,
  key: string,
  tenantId: string,
  enabled: boolean,
): Promise<FlagOverride & { key: string }> {
  if (!(await tenantExists(deps.system, tenantId))) throw notFound('Tenant');
  const override = await upsertOverride(deps.system, key, tenantId, enabled);
  if (!override) throw notFound('Feature flag');
  await audited(deps, auth, key, {
    eventType: 'feature_flag.override_set',
    action: 'set_override',
    metadata: { tenant_id: tenantId, enabled },
  });
  return { key, ...override };
}

export async function removeOverride(deps: FeatureDeps, auth: CallerPrincipal, key: string, tenantId: string) {
  if (!(await deleteOverride(deps.system, key, tenantId))) throw notFound('Override');
  await audited(deps, auth, key, {
    eventType: 'feature_flag.override_removed',
    action: 'remove_override',
    metadata: { tenant_id: tenantId },
  });
}

/** `{key: on}` for every flag, as it applies to the calling tenant. */
export async function evaluatedFlags(trx: Knex): Promise<Record<string, boolean>> {
  const flags = await tenantFlagStates(trx);
  return Object.fromEntries(flags.map((flag) => [flag.key, evaluateFlag(flag)]));
}
