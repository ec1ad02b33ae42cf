// Readers of one environment variable each: its value checked and converted, its default where it
// is unset, and an error naming the variable when it cannot be used.

/** The process environment, or a test's stand-in for it. */
export type Env = Record<string, string | undefined>;

/**
 * The largest integer setting: PostgreSQL's `integer`, which limits stored with a tenant are, and
 * the longest timer Node runs.
 */
export const MAX_INT_SETTING = 2_147_483_647;

export function intFrom(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > MAX_INT_SETTING) {
    throw new Error(`${name} must be an integer from 0 to ${MAX_INT_SETTING}, got "${raw}"`);
  }
  return value;
}

/** At least 1: a retention of 0 days would delete everything, a cap of 0 would serve nothing. */
export function positiveIntFrom(env: Env, name: string, fallback: number): number {
  const value = intFrom(env, name, fallback);
  if (value < 1) throw new Error(`${name} must be at least 1, got "${env[name]}"`);
  return value;
}

const DURATION_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "90s", "15m", "1h" or "1d" into milliseconds. */
export function parseDuration(raw: string): number {
  const match = /^(\d+)\s*(s|m|h|d)$/i.exec(raw.trim());
  const ms = match ? Number(match[1]) * DURATION_UNITS[match[2].toLowerCase()] : 0;
  if (!(ms > 0)) throw new Error(`not a duration: "${raw}" (use e.g. 90s, 15m, 1h, 1d)`);
  return ms;
}

export function durationFrom(env: Env, name: string, fallback: string): number {
  const raw = env[name] || fallback;
  try {
    return parseDuration(raw);
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
  }
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2 };

/** Parses "512kb", "1mb" or a plain byte count. */
export function parseByteSize(raw: string): number {
  const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(raw.trim());
  if (!match) throw new Error(`not a byte size: "${raw}" (use e.g. 65536, 64kb, 1mb)`);
  return Number(match[1]) * SIZE_UNITS[(match[2] ?? 'b').toLowerCase()];
}

export function byteSizeFrom(env: Env, name: string, fallback: string): number {
  try {
    return parseByteSize(env[name] || fallback);
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
  }
}

/** "100000-165535" → its bounds. */
export function uidRangeFrom(env: Env, name: string, fallback: string): { first: number; last: number } {
  const raw = env[name] || fallback;
  const match = /^(\d+)-(\d+)$/.exec(raw.trim());
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!(first > 0 && last >= first && last < 2 ** 32 - 1))
    throw new Error(`${name} must be a range of uids like 100000-165535, got "${raw}"`);
  return { first, last };
}

export const listFrom = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
