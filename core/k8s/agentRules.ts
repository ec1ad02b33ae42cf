import { SERVICE_ID_PATTERN } from '../catalog/types';
import type { AgentStatus, PushedWorkload } from './types';

export interface StatusThresholds {
  activeWithinMs: number;
  staleWithinMs: number;
}

/** An agent's status from its last heartbeat's age; one that never sent one is offline. */
export function agentStatus(lastHeartbeat: Date | null, now: Date, thresholds: StatusThresholds): AgentStatus {
  if (!lastHeartbeat) return 'offline';
  const age = now.getTime() - lastHeartbeat.getTime();
  if (age <= thresholds.activeWithinMs) return 'active';
  if (age <= thresholds.staleWithinMs) return 'stale';
  return 'offline';
}

/** The label or annotation naming a workload's entity; the fallback is Kubernetes' own app name. */
export const SERVICE_ID_KEY = 'shipyard.dev/service-id';
export const APP_NAME_KEY = 'app.kubernetes.io/name';

const SERVICE_ID = new RegExp(SERVICE_ID_PATTERN);

/**
 * The service id of the entity a workload belongs to: its `shipyard.dev/service-id` label or
 * annotation (label first), else its `app.kubernetes.io/name` one. A value that is not a valid
 * service id links no entity; it does not fall through to the next key, so a typo in the explicit
 * key never silently attaches the workload to another entity.
 */
export function serviceIdOf(workload: Pick<PushedWorkload, 'labels' | 'annotations'>): string | null {
  for (const key of [SERVICE_ID_KEY, APP_NAME_KEY]) {
    const value = workload.labels?.[key] ?? workload.annotations?.[key];
    if (value !== undefined) return SERVICE_ID.test(value) ? value : null;
  }
  return null;
}

/** The key a cluster's workload is known by; a push naming one twice is refused. */
export const workloadKey = (w: Pick<PushedWorkload, 'namespace' | 'kind' | 'name'>) =>
  `${w.namespace}/${w.kind}/${w.name}`;

/** The index of the first workload that repeats an earlier one's key, or -1. */
export function firstDuplicate(workloads: Pick<PushedWorkload, 'namespace' | 'kind' | 'name'>[]): number {
  const seen = new Set<string>();
  for (const [index, workload] of workloads.entries()) {
    const key = workloadKey(workload);
    if (seen.has(key)) return index;
    seen.add(key);
  }
  return -1;
}
