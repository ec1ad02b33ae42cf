import type { Knex } from 'knex';

// Feature flags are the platform's: writes go through the system role (`system`, the only role
// granted them; db/migrations/20261128000200_platform_admin.ts), reads of a tenant's evaluated
// flags through the app role in the tenant's transaction, where RLS shows its own overrides only.

export interface FlagOverride {
  tenant_id: string;
  enabled: boolean;
  updated_at: Date;
}

export interface FeatureFlag {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const FLAG_COLUMNS = ['key', 'name', 'description', 'enabled', 'created_at', 'updated_at'];

/** Every flag with every tenant's override (the operator's view), by key. */
export async function listFlags(system: Knex): Promise<(FeatureFlag & { overrides: FlagOverride[] })[]> {
  const [flags, overrides] = await Promise.all([
    system('feature_flags').orderBy('key').select<FeatureFlag[]>(FLAG_COLUMNS),
    system('feature_flag_overrides')
      .orderBy(['flag_key', 'tenant_id'])
      .select<(FlagOverride & { flag_key: string })[]>('flag_key', 'tenant_id', 'enabled', 'updated_at'),
  ]);
  const byFlag = Map.groupBy(overrides, (override) => override.flag_key);
  return flags.map((flag) => ({
    ...flag,
    overrides: (byFlag.get(flag.key) ?? []).map(({ tenant_id, enabled, updated_at }) => ({
      tenant_id,
      enabled,
      updated_at,
    })),
  }));
}

/** The new flag, or undefined when its key is taken. */
export async function insertFlag(
  system: Knex,
  flag: { key: string; name: string; description: string; enabled: boolean },
): Promise<FeatureFlag | undefined> {
  const [row] = await system('feature_flags')
    .insert(flag)
    .onConflict('key')
    .ignore()
    .returning<FeatureFlag[]>(FLAG_COLUMNS);
  return row;
}

export async function updateFlag(
  system: Knex,
  key: string,
  changes: { name?: string; description?: string; enabled?: boolean },
): Promise<FeatureFlag | undefined> {
  const [row] = await system('feature_flags')
    .where({ key })
    .update({ ...changes, updated_at: system.fn.now() })
    .returning<FeatureFlag[]>(FLAG_COLUMNS);
  return row;
}

/** Deletes the flag and its overrides (the foreign key cascades); false when there was none. */
export async function deleteFlag(system: Knex, key: string): Promise<boolean> {
  return (await system('feature_flags').where({ key }).del()) > 0;
}

/** Sets a tenant's override of a flag; undefined when the flag does not exist. */
export async function upsertOverride(
  system: Knex,
  key: string,
  tenantId: string,
  enabled: boolean,
): Promise<FlagOverride | undefined> {
  const { rows } = await system.raw<{ rows: FlagOverride[] }>(
    `insert into feature_flag_overrides (flag_key, tenant_id, enabled)
       select key, cast(:tenantId as uuid), cast(:enabled as boolean) from feature_flags where key = :key
     on conflict (flag_key, tenant_id) do update set enabled = excluded.enabled, updated_at = now()
     returning tenant_id, enabled, updated_at`,
    { key, tenantId, enabled },
  );
  return rows[0];
}

export async function deleteOverride(system: Knex, key: string, tenantId: string): Promise<boolean> {
  return (await system('feature_flag_overrides').where({ flag_key: key, tenant_id: tenantId }).del()) > 0;
}

export async function tenantExists(system: Knex, tenantId: string): Promise<boolean> {
  return (await system('tenants').where({ id: tenantId }).first('id')) !== undefined;
}

/**
 * The calling tenant's flags as they apply to it (in its transaction): each flag's default,
 * unless the tenant has an override, which wins (core/features/rules.ts).
 */
export const tenantFlagStates = (trx: Knex) =>
  trx('feature_flags as f')
    .leftJoin('feature_flag_overrides as o', 'o.flag_key', 'f.key')
    .orderBy('f.key')
    .select<{ key: string; enabled: boolean; override: boolean | null }[]>(
      'f.key',
      'f.enabled',
      'o.enabled as override',
    );
