import { loadConfig } from '../../core/config';
import { assertUniqueResources, canMoveCommand } from '../../core/gitops/rules';
import { GITOPS_COMMAND_STATUSES } from '../../core/gitops/types';
import { derivedPods, workloadEvents } from '../../core/operations/rules';
import type { WorkloadDetail } from '../../core/operations/workloadStore';

// The pure rules of GitOps commands and of what the operations views derive from a workload.

describe('GitOps command status moves', () => {
  test('only pending → running | succeeded | failed and running → succeeded | failed are allowed', () => {
    const allowed = GITOPS_COMMAND_STATUSES.flatMap((from) =>
      GITOPS_COMMAND_STATUSES.filter((to) => canMoveCommand(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed).toEqual([
      'pending→running',
      'pending→succeeded',
      'pending→failed',
      'running→succeeded',
      'running→failed',
    ]);
  });

  test('a push naming one resource twice is refused at the repeat', () => {
    const resource = { namespace: 'argocd', kind: 'Application', name: 'shop' };
    expect(() => assertUniqueResources([resource, { ...resource, kind: 'Kustomization' }])).not.toThrow();
    expect(() => assertUniqueResources([resource, { ...resource, name: 'other' }, { ...resource }])).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ field: 'resources.2' })] }),
    );
  });
});

const workload = (over: Partial<WorkloadDetail> = {}): WorkloadDetail => ({
  id: 'w1',
  cluster_id: 'prod',
  namespace: 'shop',
  kind: 'Deployment',
  name: 'checkout',
  status: 'degraded',
  replicas: 3,
  ready_replicas: 2,
  images: ['checkout:1'],
  entity_id: null,
  first_seen_at: '2026-11-01T00:00:00.000Z',
  last_seen_at: '2026-11-20T00:00:00.000Z',
  gone_at: null,
  labels: {},
  annotations: {},
  conditions: [],
  entity: null,
  ...over,
});

describe('derived pods', () => {
  test('one pod per replica, the first ready_replicas of them ready', () => {
    expect(derivedPods(workload(), 10)).toEqual({
      pods: [
        { name: 'checkout-0', ready: true, phase: 'Running', images: ['checkout:1'] },
        { name: 'checkout-1', ready: true, phase: 'Running', images: ['checkout:1'] },
        { name: 'checkout-2', ready: false, phase: 'NotReady', images: ['checkout:1'] },
      ],
      truncated: false,
    });
  });

  test('bounded by the maximum, saying so', () => {
    const { pods, truncated } = derivedPods(workload({ replicas: 5000, ready_replicas: 5000 }), 2);
    expect(pods).toHaveLength(2);
    expect(truncated).toBe(true);
  });
});

describe('workload events', () => {
  test('first seen, deployments, conditions at the last push and gone, newest first', () => {
    const events = workloadEvents(
      workload({
        gone_at: '2026-11-21T00:00:00.000Z',
        conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }],
      }),
      [
        {
          id: 'd1',
          cluster_id: 'prod',
          workload: { id: 'w1', namespace: 'shop', kind: 'Deployment', name: 'checkout' },
          previous_images: ['checkout:0'],
          images: ['checkout:1'],
          deployed_at: '2026-11-10T00:00:00.000Z',
        },
      ],
    );
    expect(events.map((e) => [e.type, e.at.slice(0, 10), e.message])).toEqual([
      ['Gone', '2026-11-21', 'Left out of its agent’s last push'],
      ['Condition', '2026-11-20', 'Available=False'],
      ['Deployed', '2026-11-10', 'checkout:0 → checkout:1'],
      ['FirstSeen', '2026-11-01', 'First reported by its cluster’s agent'],
    ]);
  });
});

describe('operations settings', () => {
  test('default to 5,000 resources a push and a 7-day zombie age, and read both from the environment', () => {
    expect(loadConfig({}).operations).toEqual({ gitopsMaxResourcesPerPush: 5000, zombieAgeMs: 7 * 86_400_000 });
    const set = loadConfig({ SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH: '20', SHIPYARD_OPERATIONS_ZOMBIE_AGE: '36h' });
    expect(set.operations).toEqual({ gitopsMaxResourcesPerPush: 20, zombieAgeMs: 36 * 3_600_000 });
    expect(() => loadConfig({ SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH: '0' })).toThrow(
      /SHIPYARD_GITOPS_MAX_RESOURCES_PER_PUSH/,
    );
    expect(() => loadConfig({ SHIPYARD_OPERATIONS_ZOMBIE_AGE: 'soon' })).toThrow(/SHIPYARD_OPERATIONS_ZOMBIE_AGE/);
  });
});
