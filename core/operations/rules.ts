import type { Deployment } from './entityWorkloadStore';
import type { WorkloadDetail } from './workloadStore';

// What the views derive from a workload in code: its pods and its events. The agent pushes
// neither; see docs/operations-views.md.

/**
 * The workload's pods as its replica counts describe them: `replicas` pods named
 * `<name>-<ordinal>` (a StatefulSet's own naming; other kinds' real pods carry a hash instead),
 * the first `ready_replicas` of them ready. At most `max`.
 */
export function derivedPods(
  workload: Pick<WorkloadDetail, 'name' | 'replicas' | 'ready_replicas' | 'images'>,
  max: number,
) {
  const count = Math.min(Math.max(workload.replicas, 0), max);
  return {
    pods: Array.from({ length: count }, (_, ordinal) => {
      const ready = ordinal < workload.ready_replicas;
      return {
        name: `${workload.name}-${ordinal}`,
        ready,
        phase: ready ? ('Running' as const) : ('NotReady' as const),
        images: workload.images,
      };
    }),
    truncated: workload.replicas > count,
  };
}

export interface WorkloadEvent {
  type: 'FirstSeen' | 'Condition' | 'Deployed' | 'Gone';
  reason: string;
  message: string;
  at: string;
}

/**
 * The workload's events, newest first: when it was first seen, its image changes, each pushed
 * condition as of the last push that reported it, and when a push left it out.
 */
export function workloadEvents(workload: WorkloadDetail, deployments: Deployment[]): WorkloadEvent[] {
  const events: WorkloadEvent[] = [
    {
      type: 'FirstSeen',
      reason: 'Discovered',
      message: 'First reported by its cluster’s agent',
      at: workload.first_seen_at,
    },
    ...deployments.map((d): WorkloadEvent => ({
      type: 'Deployed',
      reason: 'ImageChanged',
      message: `${d.previous_images.join(', ') || '(none)'} → ${d.images.join(', ') || '(none)'}`,
      at: d.deployed_at,
    })),
    ...workload.conditions.map((c): WorkloadEvent => ({
      type: 'Condition',
      reason: c.reason,
      message: `${c.type}=${c.status}`,
      at: workload.last_seen_at,
    })),
  ];
  if (workload.gone_at !== null)
    events.push({
      type: 'Gone',
      reason: 'NotReported',
      message: 'Left out of its agent’s last push',
      at: workload.gone_at,
    });
  // Stable: equal times keep the order above.
  return events.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
}
