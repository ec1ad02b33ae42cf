import { loadConfig } from '../../core/config';
import { checkPolicyConfig, defaultPolicyConfig } from '../../core/policies/catalogue';
import { apiKeyLifetimeRefusal, approvalGatesFirstStep, hasOwner, stringsIn } from '../../core/policies/rules';
import { settingsChange } from '../../core/settings/rules';

// The pure parts of settings and policies: what a settings change records, and what each
// enforced policy decides.

test('a settings change names the top-level keys added, removed and changed (deep comparison)', () => {
  expect(settingsChange({ a: { x: 1 }, b: 1, c: [1] }, { a: { x: 1 }, c: [2], d: null })).toEqual({
    added: ['d'],
    removed: ['b'],
    changed: ['c'],
  });
});

test('api_key_max_lifetime refuses no expiry and an expiry past max_days, and accepts one within', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  expect(apiKeyLifetimeRefusal(undefined, 30, now)).toContain('30 days');
  expect(apiKeyLifetimeRefusal('2026-02-01T00:00:00Z', 30, now)).toContain('at most 30 days');
  expect(apiKeyLifetimeRefusal('2026-01-31T00:00:00Z', 30, now)).toBeUndefined();
});

test('a blank owner is no owner', () => {
  expect([hasOwner(null), hasOwner(undefined), hasOwner(' '), hasOwner('team')]).toEqual([false, false, false, true]);
});

test('every string of a run is a candidate, however deep, each once', () => {
  expect(stringsIn([{ a: 'x', b: [{ c: 'y' }, 3, 'x'] }, { url: 'z' }]).sort()).toEqual(['x', 'y', 'z']);
  let deep: unknown = 'bottom';
  for (let i = 0; i < 100_000; i++) deep = { deep };
  expect(stringsIn([deep])).toEqual(['bottom']);
});

test('an approval gates the first step when it requires approval or is an approval; a later one does not', () => {
  expect(approvalGatesFirstStep([{ type: 'approval', requiresApproval: false }])).toBe(true);
  expect(approvalGatesFirstStep([{ type: 'script', requiresApproval: true }])).toBe(true);
  expect(
    approvalGatesFirstStep([
      { type: 'script', requiresApproval: false },
      { type: 'approval', requiresApproval: false },
    ]),
  ).toBe(false);
  expect(approvalGatesFirstStep([])).toBe(false);
});

test("a policy config gets its schema's defaults and is checked against it", () => {
  expect(defaultPolicyConfig('api_key_max_lifetime')).toEqual({ max_days: 90 });
  expect(checkPolicyConfig('api_key_max_lifetime', { max_days: 0 }).problems).toEqual([
    { field: 'config.max_days', message: 'must be >= 1' },
  ]);
});

test('the administration settings have working defaults and read their variables', () => {
  expect(loadConfig({}).admin).toEqual({
    settingsMaxBytes: 65_536,
    policyCacheMs: 30_000,
    apiKeyExpiryScanIntervalMs: 86_400_000,
    apiKeyExpiryNoticeMs: 7 * 86_400_000,
    notificationStreamsPerUser: 3,
  });
  const set = loadConfig({ SHIPYARD_SETTINGS_MAX_BYTES: '1kb', SHIPYARD_API_KEY_EXPIRY_NOTICE: '3d' }).admin;
  expect(set).toMatchObject({ settingsMaxBytes: 1024, apiKeyExpiryNoticeMs: 3 * 86_400_000 });
  expect(() => loadConfig({ SHIPYARD_SETTINGS_MAX_BYTES: 'lots' })).toThrow(/SHIPYARD_SETTINGS_MAX_BYTES/);
});
