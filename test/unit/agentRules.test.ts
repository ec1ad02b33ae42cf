import { agentStatus, firstDuplicate, serviceIdOf } from '../../core/k8s/agentRules';

const thresholds = { activeWithinMs: 90_000, staleWithinMs: 600_000 };
const now = new Date('2026-11-27T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

describe('agentStatus', () => {
  test('active up to the active threshold, stale up to the stale one, offline after', () => {
    expect(agentStatus(ago(0), now, thresholds)).toBe('active');
    expect(agentStatus(ago(90_000), now, thresholds)).toBe('active');
    expect(agentStatus(ago(90_001), now, thresholds)).toBe('stale');
    expect(agentStatus(ago(600_000), now, thresholds)).toBe('stale');
    expect(agentStatus(ago(600_001), now, thresholds)).toBe('offline');
  });

  test('an agent that never sent a heartbeat is offline', () => {
    expect(agentStatus(null, now, thresholds)).toBe('offline');
  });

  test('the thresholds come from the caller (configuration)', () => {
    expect(agentStatus(ago(5_000), now, { activeWithinMs: 1_000, staleWithinMs: 2_000 })).toBe('offline');
  });
});

describe('serviceIdOf', () => {
  test('the shipyard.dev/service-id label wins over its annotation and over app.kubernetes.io/name', () => {
    expect(
      serviceIdOf({
        labels: { 'shipyard.dev/service-id': 'from-label', 'app.kubernetes.io/name': 'app-name' },
        annotations: { 'shipyard.dev/service-id': 'from-annotation' },
      }),
    ).toBe('from-label');
  });

  test('the annotation is read when no label names the service', () => {
    expect(
      serviceIdOf({
        labels: { 'app.kubernetes.io/name': 'app-name' },
        annotations: { 'shipyard.dev/service-id': 'svc' },
      }),
    ).toBe('svc');
  });

  test('app.kubernetes.io/name is the fallback, as a label or an annotation', () => {
    expect(serviceIdOf({ labels: { 'app.kubernetes.io/name': 'checkout' } })).toBe('checkout');
    expect(serviceIdOf({ annotations: { 'app.kubernetes.io/name': 'billing' } })).toBe('billing');
  });

  test('a value that is not a valid service id links no entity, and does not fall through', () => {
    expect(serviceIdOf({ labels: { 'app.kubernetes.io/name': 'My App' } })).toBeNull();
    expect(
      serviceIdOf({ labels: { 'shipyard.dev/service-id': 'Not_Valid', 'app.kubernetes.io/name': 'checkout' } }),
    ).toBeNull();
  });

  test('a workload without either key links no entity', () => {
    expect(serviceIdOf({ labels: { app: 'x' } })).toBeNull();
    expect(serviceIdOf({})).toBeNull();
  });
});

test('firstDuplicate finds the first workload repeating namespace, kind and name', () => {
  const w = (namespace: string, kind: string, name: string) => ({ namespace, kind, name });
  expect(firstDuplicate([w('a', 'Deployment', 'x'), w('a', 'StatefulSet', 'x'), w('b', 'Deployment', 'x')])).toBe(-1);
  expect(firstDuplicate([w('a', 'Deployment', 'x'), w('b', 'Deployment', 'y'), w('a', 'Deployment', 'x')])).toBe(2);
});
