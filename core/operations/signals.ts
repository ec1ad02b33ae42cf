import type { ZombieSignal } from './types';

// What the views derive from a workload row (alias `w`), as SQL, so that lists filter on the
// same expressions they report. `?` in a signal is the zombie cutoff (now minus the zombie age).

export const STATUS_SQL = `case
  when w.gone_at is not null then 'gone'
  when w.replicas = 0 then 'scaled_to_zero'
  when w.ready_replicas = 0 then 'unavailable'
  when w.ready_replicas < w.replicas then 'degraded'
  else 'healthy' end`;

const PRESENT_AND_OLD = 'w.gone_at is null and w.first_seen_at < ?::timestamptz';

export const SIGNAL_SQL: Record<ZombieSignal, string> = {
  unavailable: `(${PRESENT_AND_OLD} and w.replicas > 0 and w.ready_replicas = 0)`,
  scaled_to_zero: `(${PRESENT_AND_OLD} and w.replicas = 0)`,
  unowned: `(${PRESENT_AND_OLD} and w.entity_id is null)`,
  stale: `(w.gone_at is null and w.last_seen_at < ?::timestamptz)`,
};

/** Any signal, with one cutoff binding per signal. */
export const ZOMBIE_SQL = `(${Object.values(SIGNAL_SQL).join(' or ')})`;

/** The workload's signals as a text array, with one cutoff binding per signal. */
export const SIGNALS_ARRAY_SQL = `array_remove(array[${Object.entries(SIGNAL_SQL)
  .map(([name, sql]) => `case when ${sql} then '${name}' end`)
  .join(', ')}], null)`;

export const SIGNAL_COUNT = Object.keys(SIGNAL_SQL).length;
