import { interleaveByTenant, statusMessage, STATUS_MESSAGE_MAX, syncRefusal } from '../../core/integrations/syncRules';

// Which integrations may sync, and the order the schedule's tick takes them in.

test('only vcs-host-a and incident-tool-a sync, and not while inactive; error may sync again', () => {
  for (const type of ['vcs-host-b', 'incident-tool-b', 'monitoring-tool-a', 'custom'] as const)
    expect(syncRefusal({ type, status: 'active' })).toMatch(`A ${type} integration has nothing to sync`);
  expect(syncRefusal({ type: 'incident-tool-a', status: 'inactive' })).toMatch(/inactive/);
  expect(syncRefusal({ type: 'vcs-host-a', status: 'error' })).toBeUndefined();
  expect(syncRefusal({ type: 'incident-tool-a', status: 'active' })).toBeUndefined();
});

test("the tick takes tenants round-robin, so a tenant's many integrations never hold the others back", () => {
  const targets = ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'c2'].map((id) => ({ tenantId: id[0], integrationId: id }));
  expect(interleaveByTenant(targets).map((t) => t.integrationId)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3', 'a4']);
  expect(interleaveByTenant([])).toEqual([]);
});

test('a status message is kept to its bound', () => {
  expect(statusMessage('short')).toBe('short');
  const long = statusMessage('x'.repeat(2000));
  expect(long).toHaveLength(STATUS_MESSAGE_MAX);
  expect(long.endsWith('…')).toBe(true);
});
