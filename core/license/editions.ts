/** The license editions, as the spec names them; `free` is a tenant without a license. */
export const EDITIONS = ['free', 'beta', 'standard', 'airgapped'] as const;
export type Edition = (typeof EDITIONS)[number];

/** What an edition allows; 0 means unlimited. */
export interface ResourceLimits {
  clusters: number;
  nodes: number;
}

/**
 * Each edition's own limits (the spec's table). Free nodes: cap 5 (../shared/DESIGN.md). An
 * airgapped license states its own counts, so its edition alone is unlimited.
 */
export const EDITION_LIMITS: Record<Edition, ResourceLimits> = {
  free: { clusters: 1, nodes: 5 },
  beta: { clusters: 3, nodes: 0 },
  standard: { clusters: 3, nodes: 0 },
  airgapped: { clusters: 0, nodes: 0 },
};

/** What a tenant's license says of its limits; undefined for a tenant without one (free). */
export interface LicensedLimits {
  edition: Exclude<Edition, 'free'>;
  /** The license's own cluster count; 0 means the edition's. */
  clusters: number;
  /** The license's own node count; 0 means the edition's. */
  nodes: number;
}

/**
 * A tenant's limits: the license's counts where it states them, else its edition's, plus the
 * clusters an admin granted by approving parked registrations (on an unlimited count, nothing).
 */
export function resourceLimits(license: LicensedLimits | undefined, approvedClusters: number): ResourceLimits {
  const edition = EDITION_LIMITS[license?.edition ?? 'free'];
  const clusters = license?.clusters || edition.clusters;
  return {
    clusters: clusters === 0 ? 0 : clusters + approvedClusters,
    nodes: license?.nodes || edition.nodes,
  };
}
