// The pure parts of the DORA metrics (docs/insights.md, DORA metrics): windows, performance bands and the
// lead-time walk from commits to the deployments that carry them. No I/O.

export const DORA_WINDOWS = ['7d', '30d', '90d'] as const;
export type DoraWindow = (typeof DORA_WINDOWS)[number];

export const DORA_BANDS = ['elite', 'high', 'medium', 'low'] as const;
export type DoraBand = (typeof DORA_BANDS)[number];

const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The window's length in milliseconds. */
export const windowMs = (window: DoraWindow): number => Number.parseInt(window, 10) * DAY_MS;

/** Bounds best band first: the first one the value meets names its band; none met is low. */
function bandOf(meets: (bound: number) => boolean, bounds: [number, number, number]): DoraBand {
  const index = bounds.findIndex(meets);
  return index === -1 ? 'low' : DORA_BANDS[index];
}

// The thresholds of the 2023 Accelerate State of DevOps Report (DORA, Google Cloud), its
// performance-level table. Where the report's ranges overlap or leave gaps (its low and medium
// deployment frequency and lead time read alike), the bound between two bands is the better
// band's limit.

/** Elite: on demand (a day or more); high: daily to weekly; medium: weekly to monthly; low: less. */
export const deploymentFrequencyBand = (perDay: number): DoraBand =>
  bandOf((bound) => perDay >= bound, [1, 1 / 7, 1 / 30]);

/** Elite: under a day; high: a day to a week; medium: a week to a month; low: longer. */
export const leadTimeBand = (ms: number): DoraBand =>
  bandOf((bound) => ms < bound, [DAY_MS, 7 * DAY_MS + 1, 30 * DAY_MS + 1]);

/** Elite: 5% or less; high: 10%; medium: 15%; low: more (the report's low cluster is at 64%). */
export const changeFailureRateBand = (percent: number): DoraBand => bandOf((bound) => percent <= bound, [5, 10, 15]);

/** Elite: under an hour; high: under a day; medium: a day to a week; low: longer. */
export const timeToRestoreBand = (ms: number): DoraBand =>
  bandOf((bound) => ms < bound, [HOUR_MS, DAY_MS, 7 * DAY_MS + 1]);

/** The median (the mean of the middle two for an even count), or null for none. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A deployment that names a commit: by its image tag or its run's `commit`/`ref` parameter. */
export interface NamingDeployment {
  deployedAt: Date;
  /** A commit sha or its prefix of 7 or more lower-case hex digits. */
  ref: string;
}

export interface CommitTime {
  sha: string;
  committedAt: Date;
}

/** The one commit whose sha starts with `ref` (by binary search of shas sorted), or undefined if none or several. */
function commitNamed(bySha: CommitTime[], ref: string): CommitTime | undefined {
  let low = 0;
  let high = bySha.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (bySha[middle].sha < ref) low = middle + 1;
    else high = middle;
  }
  const found = bySha[low];
  if (!found?.sha.startsWith(ref)) return undefined;
  return bySha[low + 1]?.sha.startsWith(ref) ? undefined : found;
}

/**
 * One entity's lead times (ms), of the deployments at or after `from`. Walking its naming
 * deployments oldest first, each carries the commits of the entity's repositories committed up to
 * the commit it names and after everything an earlier deployment carried; a deployment naming no
 * known commit, or one already carried (a rollback), carries nothing. A lead time is from a
 * commit's time to the deployment carrying it.
 */
export function leadTimes(deployments: NamingDeployment[], commits: CommitTime[], from: Date): number[] {
  const byTime = [...commits].sort((a, b) => a.committedAt.getTime() - b.committedAt.getTime());
  const bySha = [...commits].sort((a, b) => (a.sha < b.sha ? -1 : a.sha > b.sha ? 1 : 0));
  const ordered = [...deployments].sort((a, b) => a.deployedAt.getTime() - b.deployedAt.getTime());
  const leads: number[] = [];
  let next = 0;
  for (const deployment of ordered) {
    const named = commitNamed(bySha, deployment.ref);
    if (!named) continue;
    const carriedAt = deployment.deployedAt.getTime();
    for (; next < byTime.length && byTime[next].committedAt <= named.committedAt; next++)
      if (deployment.deployedAt >= from) leads.push(Math.max(0, carriedAt - byTime[next].committedAt.getTime()));
  }
  return leads;
}
