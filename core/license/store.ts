import type { Knex } from 'knex';
import type { KeyObject } from 'node:crypto';
import { resourceLimits, type ResourceLimits } from './editions';
import { verifiedOrUndefined, type LicensePayload } from './keys';
import type { LicenseRow, UsageResource } from './rules';

/** The tenant's stored license, and whether its key still verifies with `publicKey`. */
export async function readVerifiedLicense(trx: Knex, publicKey: KeyObject) {
  const row = await readLicense(trx);
  return { row, verified: row !== undefined && verifiedOrUndefined(row.license_key, publicKey) !== undefined };
}

/**
 * The calling tenant's limits (in its transaction: RLS picks the tenant's rows): its license's
 * while the stored key still verifies, else the free edition's (license data unreadable), plus
 * the clusters approved on top.
 */
export async function tenantLimits(trx: Knex, publicKey: KeyObject): Promise<ResourceLimits> {
  const [{ row, verified }, approved] = await Promise.all([readVerifiedLicense(trx, publicKey), approvedClusters(trx)]);
  return resourceLimits(verified ? row : undefined, approved);
}

export async function approvedClusters(trx: Knex): Promise<number> {
  const grants = await trx('cluster_grants').first<{ approved_clusters: number } | undefined>('approved_clusters');
  return grants?.approved_clusters ?? 0;
}

export const readLicense = (trx: Knex): Promise<LicenseRow | undefined> => trx('licenses').first<LicenseRow>('*');

/** The edition and Beta end of the tenant's license, what the read-only guard needs. */
export const readOnlyFacts = (trx: Knex) =>
  trx('licenses').first<{ edition: LicenseRow['edition']; beta_ends_at: Date | null } | undefined>(
    'edition',
    'beta_ends_at',
  );

/**
 * Live usage: clusters are the agents holding a token that is not revoked (a disconnected agent
 * no longer counts), nodes the sum of their last reported node counts.
 */
export async function licenseUsage(trx: Knex): Promise<Record<UsageResource, number>> {
  const { rows } = await trx.raw<{ rows: { clusters: number; nodes: number }[] }>(`
    select count(*)::int as clusters, coalesce(sum(a.node_count), 0)::int as nodes
    from k8s_agents a
    where exists (
      select 1 from agent_tokens t
      where t.tenant_id = a.tenant_id and t.cluster_id = a.cluster_id and t.revoked_at is null
    )`);
  return rows[0];
}

/** Stores the tenant's verified license, replacing any other; the Beta timeline restarts with it. */
export async function upsertLicense(
  trx: Knex,
  tenantId: string,
  key: string,
  keyPrefix: string,
  payload: LicensePayload,
  betaEnds: Date | null,
): Promise<void> {
  await trx('licenses')
    .insert({
      tenant_id: tenantId,
      license_key: key,
      key_prefix: keyPrefix,
      edition: payload.edition,
      type: payload.type,
      clusters: payload.clusters,
      nodes: payload.nodes,
      licensee: payload.licensee,
      issued_at: payload.issued_at,
      expires_at: payload.expires_at,
      activated_at: trx.fn.now(),
      beta_ends_at: betaEnds,
      beta_grace_ends_at: null,
    })
    .onConflict('tenant_id')
    .merge();
}

/** Removes the tenant's license (free limits); the removed row, if there was one. */
export async function deleteLicense(trx: Knex): Promise<LicenseRow | undefined> {
  const [row] = await trx('licenses').delete().returning<LicenseRow[]>('*');
  return row;
}

/**
 * Marks the start of the Beta grace at the first status read past the Beta end: sets its end
 * `graceMs` from now, once. The end it set, or undefined when it was set already (or not due).
 */
export async function startBetaGrace(trx: Knex, graceMs: number): Promise<Date | undefined> {
  const [row] = await trx('licenses')
    .update({ beta_grace_ends_at: trx.raw('now() + make_interval(secs => ?)', [graceMs / 1000]) })
    .where({ edition: 'beta' })
    .whereNull('beta_grace_ends_at')
    .where('beta_ends_at', '<=', trx.fn.now())
    .returning<{ beta_grace_ends_at: Date }[]>('beta_grace_ends_at');
  return row?.beta_grace_ends_at;
}

export interface PendingCluster {
  cluster_id: string;
  name: string;
  environment: string | null;
  region: string | null;
  attempts: number;
  first_attempted_at: Date;
  last_attempted_at: Date;
}

export const listPendingClusters = (trx: Knex): Promise<PendingCluster[]> =>
  trx('pending_cluster_registrations')
    .select('cluster_id', 'name', 'environment', 'region', 'attempts', 'first_attempted_at', 'last_attempted_at')
    .orderBy([{ column: 'first_attempted_at' }, { column: 'cluster_id' }]);

/** Removes a parked registration; whether there was one. */
export async function deletePendingCluster(trx: Knex, clusterId: string): Promise<PendingCluster | undefined> {
  const [row] = await trx('pending_cluster_registrations')
    .delete()
    .where({ cluster_id: clusterId })
    .returning<PendingCluster[]>('*');
  return row;
}

/** Raises the tenant's approved clusters by one; the new total. */
export async function grantCluster(trx: Knex, tenantId: string): Promise<number> {
  const [row] = await trx('cluster_grants')
    .insert({ tenant_id: tenantId, approved_clusters: 1 })
    .onConflict('tenant_id')
    .merge({
      approved_clusters: trx.raw('cluster_grants.approved_clusters + 1'),
      updated_at: trx.fn.now(),
    })
    .returning<{ approved_clusters: number }[]>('approved_clusters');
  return row.approved_clusters;
}

/**
 * Tenants whose Beta grace is over (read across tenants with the system role): the grace end
 * when a status read set it, else the Beta end plus the grace, since an unread status must not
 * keep a tenant connected.
 */
export async function tenantsPastBetaGrace(system: Knex, graceMs: number): Promise<string[]> {
  const rows = await pastBetaGrace(system, graceMs).select<{ tenant_id: string }[]>('tenant_id').orderBy('tenant_id');
  return rows.map((row) => row.tenant_id);
}

/** Locks the calling tenant's license if its Beta grace is over; whether it is. */
export async function lockLicensePastBetaGrace(trx: Knex, graceMs: number): Promise<boolean> {
  return (await pastBetaGrace(trx, graceMs).first('tenant_id').forUpdate()) !== undefined;
}

const pastBetaGrace = (db: Knex, graceMs: number) =>
  db('licenses')
    .where({ edition: 'beta' })
    .whereRaw('coalesce(beta_grace_ends_at, beta_ends_at + make_interval(secs => ?)) <= now()', [graceMs / 1000]);

export interface Disconnection {
  kept: string | null;
  revoked: string[];
}

/**
 * Keeps one connected cluster of the tenant (smallest node count, then the oldest) and revokes
 * the tokens of every other agent; their data stays. Locks the tenant's agents so two runs
 * cannot each keep a different one.
 */
export async function disconnectExcessClusters(trx: Knex): Promise<Disconnection> {
  const connected = await trx('k8s_agents as a')
    .select<{ cluster_id: string }[]>('a.cluster_id')
    .whereExists((sub) =>
      sub
        .select(trx.raw('1'))
        .from('agent_tokens as t')
        .whereRaw('t.tenant_id = a.tenant_id and t.cluster_id = a.cluster_id and t.revoked_at is null'),
    )
    .orderBy([{ column: 'a.node_count' }, { column: 'a.created_at' }, { column: 'a.cluster_id' }])
    .forUpdate();
  if (connected.length === 0) return { kept: null, revoked: [] };
  const [kept, ...others] = connected.map((row) => row.cluster_id);
  if (others.length > 0) {
    await trx('agent_tokens')
      .update({ revoked_at: trx.fn.now() })
      .whereNull('revoked_at')
      .where('cluster_id', '=', trx.raw('any(?)', [others]));
  }
  return { kept, revoked: others };
}
