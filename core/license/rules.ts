import type { Edition, ResourceLimits } from './editions';
import type { LicenseType } from './keys';

// Pure rules of a tenant's license: the Beta timeline, usage against limits, the warnings and
// the status the API answers.

/** Beta keys issued before this date get at least this long (the spec's legacy floor). */
export const BETA_LEGACY_FLOOR = new Date('2026-11-10T00:00:00.000Z');
/** An expiry this close raises `expiring_soon`. */
export const EXPIRY_WARNING_MS = 30 * 86_400_000;
/** A resource this full (percent of its limit) raises `resource_high`. */
export const RESOURCE_HIGH_PERCENT = 80;

/** `from` plus `months` calendar months (UTC), the day clamped to the month's last. */
function addMonths(from: Date, months: number): Date {
  const target = new Date(from);
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

/** The end of a Beta key's free period: `periodMonths` after issue, floored for legacy keys. */
export function betaEndsAt(issuedAt: Date, periodMonths: number): Date {
  const end = addMonths(issuedAt, periodMonths);
  return issuedAt < BETA_LEGACY_FLOOR && end < BETA_LEGACY_FLOOR ? BETA_LEGACY_FLOOR : end;
}

/** A Beta tenant past its free period is read-only until it activates a paid key. */
export const isReadOnly = (edition: Edition, betaEnds: Date | null, now: Date): boolean =>
  edition === 'beta' && betaEnds !== null && now >= betaEnds;

export const USAGE_RESOURCES = ['clusters', 'nodes'] as const;
export type UsageResource = (typeof USAGE_RESOURCES)[number];

export interface ResourceUsage {
  resource: UsageResource;
  used: number;
  /** 0: unlimited. */
  limit: number;
  /** Of the limit, rounded down; 0 when unlimited. */
  percent: number;
}

export function resourceUsage(used: Record<UsageResource, number>, limits: ResourceLimits): ResourceUsage[] {
  return USAGE_RESOURCES.map((resource) => {
    const limit = limits[resource];
    return {
      resource,
      used: used[resource],
      limit,
      percent: limit === 0 ? 0 : Math.floor((used[resource] * 100) / limit),
    };
  });
}

export const WARNING_TYPES = ['expired', 'expiring_soon', 'resource_high', 'resource_exceeded'] as const;
export type WarningType = (typeof WARNING_TYPES)[number];
export interface LicenseWarning {
  type: WarningType;
  message: string;
  level: 'warning' | 'error';
}

/** The warnings of a license expiring at `expiresAt` (null: never) with `usage`, at `now`. */
export function licenseWarnings(expiresAt: Date | null, usage: ResourceUsage[], now: Date): LicenseWarning[] {
  const warnings: LicenseWarning[] = [];
  if (expiresAt && expiresAt <= now) {
    warnings.push({ type: 'expired', level: 'error', message: `The license expired at ${expiresAt.toISOString()}` });
  } else if (expiresAt && expiresAt.getTime() - now.getTime() <= EXPIRY_WARNING_MS) {
    const days = Math.ceil((expiresAt.getTime() - now.getTime()) / 86_400_000);
    warnings.push({ type: 'expiring_soon', level: 'warning', message: `The license expires in ${days} day(s)` });
  }
  for (const { resource, used, limit, percent } of usage) {
    if (limit === 0) continue;
    if (used > limit) {
      warnings.push({
        type: 'resource_exceeded',
        level: 'error',
        message: `${used} ${resource} in use, over the limit of ${limit}`,
      });
    } else if (percent >= RESOURCE_HIGH_PERCENT) {
      warnings.push({
        type: 'resource_high',
        level: 'warning',
        message: `${used} of ${limit} ${resource} in use (${percent}%)`,
      });
    }
  }
  return warnings;
}

/** A tenant's stored license, as its row holds it. */
export interface LicenseRow {
  license_key: string;
  key_prefix: string;
  edition: Exclude<Edition, 'free'>;
  type: LicenseType;
  clusters: number;
  nodes: number;
  licensee: string;
  issued_at: Date;
  expires_at: Date | null;
  activated_at: Date;
  beta_ends_at: Date | null;
  beta_grace_ends_at: Date | null;
}

/** GET /license (the spec's LicenseStatus). */
export interface LicenseStatus {
  edition: Edition;
  type: LicenseType | null;
  clusters: number;
  licensee: string | null;
  issued_at: Date | null;
  expires_at: Date | null;
  activated_at: Date | null;
  key_prefix: string | null;
  resource_limits: ResourceLimits;
  resource_usage: ResourceUsage[];
  warnings: LicenseWarning[];
  is_expired: boolean;
  is_valid: boolean;
  has_license: boolean;
  beta_ends_at: Date | null;
  beta_grace_ends_at: Date | null;
  is_read_only: boolean;
}

/**
 * The status of a tenant's license. `row` is its stored license, `verified` whether its key
 * still verifies: one that no longer does counts as unreadable license data, so the tenant has
 * free limits and an invalid license (has_license stays true: a key is stored). An expired key
 * is invalid too but keeps its edition's limits, as the spec says.
 */
export function licenseStatus(
  row: LicenseRow | undefined,
  verified: boolean,
  limits: ResourceLimits,
  used: Record<UsageResource, number>,
  now: Date,
): LicenseStatus {
  const readable = row && verified ? row : undefined;
  const usage = resourceUsage(used, limits);
  const isExpired = !!readable?.expires_at && readable.expires_at <= now;
  const edition: Edition = readable?.edition ?? 'free';
  const betaEnds = edition === 'beta' ? (readable?.beta_ends_at ?? null) : null;
  return {
    edition,
    type: readable?.type ?? null,
    clusters: readable?.clusters ?? 0,
    licensee: readable?.licensee ?? null,
    issued_at: readable?.issued_at ?? null,
    expires_at: readable?.expires_at ?? null,
    activated_at: row?.activated_at ?? null,
    key_prefix: row?.key_prefix ?? null,
    resource_limits: limits,
    resource_usage: usage,
    warnings: licenseWarnings(readable?.expires_at ?? null, usage, now),
    is_expired: isExpired,
    is_valid: row ? verified && !isExpired : true,
    has_license: !!row,
    beta_ends_at: betaEnds,
    beta_grace_ends_at: edition === 'beta' ? (readable?.beta_grace_ends_at ?? null) : null,
    is_read_only: isReadOnly(edition, betaEnds, now),
  };
}
