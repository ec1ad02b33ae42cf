// The operations views' vocabulary (docs/operations-views.md says what each value means).

/** A workload's state, from its replica counts and whether its agent still reports it. */
export const WORKLOAD_STATUSES = ['healthy', 'degraded', 'unavailable', 'scaled_to_zero', 'gone'] as const;
export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];

/** Why a present workload counts as a zombie; each holds only past the zombie age. */
export const ZOMBIE_SIGNALS = ['unavailable', 'scaled_to_zero', 'unowned', 'stale'] as const;
export type ZombieSignal = (typeof ZOMBIE_SIGNALS)[number];

/** A condition as the agent pushes it. */
export interface WorkloadCondition {
  type: string;
  status: string;
  reason: string;
}
