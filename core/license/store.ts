import type { Knex } from 'knex';
import { resourceLimits, type LicensedLimits, type ResourceLimits } from './editions';

/**
 * The calling tenant's limits (in its transaction: RLS picks the tenant's rows), from its
 * license and the clusters approved on top of it.
 */
export async function tenantLimits(trx: Knex): Promise<ResourceLimits> {
  const [license, grants] = await Promise.all([
    trx('licenses').first<LicensedLimits | undefined>('edition', 'clusters', 'nodes'),
    trx('cluster_grants').first<{ approved_clusters: number } | undefined>('approved_clusters'),
  ]);
  return resourceLimits(license, grants?.approved_clusters ?? 0);
}
